#!/usr/bin/env bash
# SIGKILL of the daemon at several moments of a compaction (early while the
# filesystem is mapped, while other files' blocks move, near the end), each
# time on the state the last one left: every file keeps its content, times
# and holes, e2fsck is clean, and free blocks are back where they were
# (unnamed donors die with the daemon; a few blocks of extent tree may
# move). Then a compaction runs to its end on what is left.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
require_cmd e2fsck dumpe2fs
HERE=$(cd "$(dirname "$0")" && pwd)
setup_image 512 -m 0 -b 4096
python3 "$HERE/aged_holes.py" "$SRC" 3000 64 0 3 # a third of each window is data: regions qualify (test_compact)
sync
drop_caches
"${FSNAP[@]}" snap "$SRC" >"$T/snap.before"

free_blocks() {
	dumpe2fs -h "$LOOP" 2>/dev/null | sed -n 's/^Free blocks: *//p'
}
umount "$SRC"
free_before=$(free_blocks)
mount "$LOOP" "$SRC"

# wait_moved BYTES: until the running compaction has moved at least BYTES
# of others' files (its room_bytes_moved grows as files move), at most
# 30 s; 0 at once.
wait_moved() {
	local i b
	[ "$1" -gt 0 ] || return 0
	for ((i = 0; i < 3000; i++)); do
		b=$(dkey "$MNT/defrag" room_bytes_moved 2>/dev/null || echo 0)
		[ "${b:-0}" -ge "$1" ] && return 0
		sleep 0.01
	done
	fail "the compaction moved nothing in 30 s (room_bytes_moved ${b:-?})"
}

# Throttled to 16 MiB/s so that the moves last long enough to be hit
# (unthrottled, the whole compaction took 0.3 s on a loaded machine, and
# kills after fixed delays came before or after the moves). The moments:
# while the filesystem is mapped (nothing moved yet), once the first
# file moved, once 8 MiB moved.
for at in 0 1 8388608; do
	start_e4infofs
	( echo "compact mibps=16" >"$MNT/defrag" ) 2>/dev/null &
	job=$!
	if [ "$at" -eq 0 ]; then sleep 0.03; else wait_moved "$at"; fi
	moved=$(dkey "$MNT/defrag" state 2>/dev/null || true) # the job's state when killed
	bytes=$(dkey "$MNT/defrag" room_bytes_moved 2>/dev/null || true)
	kill -KILL "$DAEMON_PID"
	forget_daemon "$DAEMON_PID"
	wait "$job" 2>/dev/null || true
	_umount_fuse "$MNT"
	umount "$SRC"
	e2fsck -fn "$LOOP" >"$T/fsck.log" 2>&1 || fail "e2fsck after SIGKILL at $at bytes: $(tail -5 "$T/fsck.log")"
	free_now=$(free_blocks)
	within "$free_now" "$free_before" 32 || fail "free blocks $free_before -> $free_now after SIGKILL at $at bytes"
	mount "$LOOP" "$SRC"
	drop_caches
	"${FSNAP[@]}" snap "$SRC" >"$T/snap.now"
	diff "$T/snap.before" "$T/snap.now" >"$T/snap.diff" ||
		fail "content, times or holes changed after SIGKILL at $at bytes: $(head -5 "$T/snap.diff")"
	log "SIGKILL after $at bytes (job ${moved:-not started}, ${bytes:-0} bytes moved to make room): intact, free blocks $free_before -> $free_now"
	if [ "$at" -gt 0 ]; then
		[ "$moved" = running ] || fail "the job was $moved when killed after $at bytes: the kill came too late"
	fi
done

# What is left compacts to the end.
start_e4infofs
echo compact >"$MNT/defrag" || fail "the compaction after the kills"
check_eq "$(dkey "$MNT/defrag" state)" done "state"
stop_e4infofs
drop_caches
"${FSNAP[@]}" snap "$SRC" >"$T/snap.now"
diff "$T/snap.before" "$T/snap.now" >/dev/null || fail "content changed by the last compaction"
log "ok"
