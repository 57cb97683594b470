#!/usr/bin/env bash
# Making room never holds more free space than its bound, and gives it back
# to a writer who needs it. On a 512 MiB filesystem whose free space is all
# 128 KiB holes (aged_holes.py, two of every three 64 KiB files deleted,
# ~117 MiB free: with every other one deleted, windows held half data, at
# compact's bound, and under load none qualified: nothing was held):
# 1. `compact hold_mib=8` while a sampler reads statvfs as fast as it can:
#    the space available to others never drops more than 8 MiB (and 64
#    blocks of extent tree) below where it was (its regions are then 4 MiB). The same compaction on a copy
#    with hold_mib=64 is seen to hold more than 8 MiB at some moment: the
#    sampler sees holding, and the bound is what kept the first under it.
# 2. A writer fills the filesystem (dd until ENOSPC) on a fresh copy, alone,
#    and on another fresh copy while a slow compaction runs (mibps=4): it
#    writes no less with the job (within 1 MiB, extent-tree blocks), and
#    the job says it gave way (room_gave_way: 1, a log line).
# 3. Writers overwrite the small files at random during a compaction
#    (room_writer.py): every file holds what was written last, and some of
#    them were both written and moved.
# Everything the jobs moved stays intact (check_moved_intact).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
require_cmd e2fsck
HERE=$(cd "$(dirname "$0")" && pwd)
setup_image 512 -m 0 -b 4096
python3 "$HERE/aged_holes.py" "$SRC" 2800 64 0 3
sync
umount "$SRC"
cp --sparse=always "$IMG" "$T/base.img"
mount "$LOOP" "$SRC"

# fresh_copy DIR: mounts a copy of the aged image on DIR.
fresh_copy() {
	cp --sparse=always "$T/base.img" "$T/$(basename "$1").img"
	mount_image "$T/$(basename "$1").img" "$1"
}

# wait_ready WHAT SECS: until $T/ready exists (WHAT started), or fail.
wait_ready() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		[ -e "$T/ready" ] && return 0
		sleep 0.05
	done
	fail "the $1 did not start"
}

# compact_sampled ROOT MNT OPTIONS: runs a compaction with the sampler on;
# prints the largest drop of f_bavail (bytes) and the bytes moved.
compact_sampled() {
	local root=$1 mnt=$2 opts=$3 first low n
	rm -f "$T/stop" "$T/ready"
	python3 "$HERE/bavail_min.py" "$root" "$T/stop" "$T/ready" >"$T/sampled" &
	local sampler=$!
	wait_ready sampler 10
	echo "compact $opts" >"$mnt/defrag" || fail "echo compact $opts"
	touch "$T/stop"
	wait "$sampler"
	read -r first low n <"$T/sampled"
	[ "$n" -gt 100 ] || fail "only $n statvfs samples"
	echo "$((first - low)) $(dkey "$mnt/defrag" room_bytes_moved)"
}

# 1. The bound, sampled.
drop_caches
snap_before
free_before=$(stat -f -c %f "$SRC")
start_e4infofs
read -r drop moved < <(compact_sampled "$SRC" "$MNT" "hold_mib=8")
log "hold_mib=8: held at most $((drop / 1024)) KiB, moved $((moved / 1048576)) MiB"
[ "$moved" -gt 0 ] || fail "compact hold_mib=8 moved nothing"
# The donor may reach the bound exactly; beyond it, what the kernel holds
# while it moves a chunk (up to 1.3 MiB over the bound seen in CI) and the
# extent-tree blocks the moves may allocate: 2 MiB of slack.
[ "$drop" -le $(((8 << 20) + (2 << 20))) ] || fail "compact hold_mib=8 held $drop bytes at some moment"
stop_e4infofs
check_moved_intact "$free_before"

fresh_copy "$T/wide"
mount_e4infofs "$T/wide" "$T/mwide"
read -r drop64 moved64 < <(compact_sampled "$T/wide" "$T/mwide" "hold_mib=64")
log "hold_mib=64: held at most $((drop64 / 1024)) KiB, moved $((moved64 / 1048576)) MiB"
[ "$drop64" -gt $((8 << 20)) ] || fail "hold_mib=64 never seen holding more than 8 MiB ($drop64): the sampler sees nothing"
[ "$drop64" -le $((64 << 20)) ] || fail "compact hold_mib=64 held $drop64 bytes at some moment"
stop_e4infofs "$T/mwide"

# 2. A writer that fills the filesystem, alone and during a job.
fill() {
	dd if=/dev/zero of="$1/fill" bs=1M 2>/dev/null && fail "dd into $1 ended without ENOSPC"
	sync
	stat -c %s "$1/fill"
}
fresh_copy "$T/alone"
alone=$(fill "$T/alone")
fresh_copy "$T/busy"
mount_e4infofs "$T/busy" "$T/mbusy"
echo "compact mibps=4" >"$T/mbusy/defrag" &
job=$!
# The compaction's counts show at its end; at 4 MiB/s it runs ~9 s.
wait_state "$T/mbusy/defrag" running 10
sleep 1
[ "$(dkey "$T/mbusy/defrag" state)" = running ] || fail "the compaction is not running: $(tr '\n' ' ' <"$T/mbusy/defrag")"
during=$(fill "$T/busy")
wait "$job" || fail "the compaction's writer failed"
log "writer alone: $((alone / 1048576)) MiB; during compact: $((during / 1048576)) MiB; status: $(grep -v ': 0$' "$T/mbusy/defrag" | tr '\n' ' ')"
[ "$during" -ge $((alone - (1 << 20))) ] || fail "the writer got ENOSPC earlier during the job: $during < $alone bytes"
check_eq "$(dkey "$T/mbusy/defrag" room_gave_way)" 1 "room_gave_way"
grep -q "compact stopped: the free space left to others" "$T"/daemon*.log || fail "no log line for giving way"
stop_e4infofs "$T/mbusy"

# 3. Writers to the files being moved out of the way lose nothing.
fresh_copy "$T/written"
mount_e4infofs "$T/written" "$T/mwritten"
rm -f "$T/stop" "$T/ready"
python3 "$HERE/room_writer.py" "$T/written/small" "$T/stop" "$T/ready" 7 >"$T/writer.out" &
writer=$!
wait_ready writer 20
echo "compact mibps=8" >"$T/mwritten/defrag" || fail "compact during writes"
touch "$T/stop"
wait "$writer" || fail "the writer failed"
read -r _ written _ moved _ both _ bad <"$T/writer.out"
log "writers during compact: $(cat "$T/writer.out"); status: $(grep -v ': 0$' "$T/mwritten/defrag" | tr '\n' ' ')"
check_eq "$bad" 0 "files whose content is not what was written"
[ "$both" -gt 0 ] || fail "no file was both written and moved ($written written, $moved moved): nothing tested"
stop_e4infofs "$T/mwritten"
log "ok"
