#!/usr/bin/env bash
# `echo compact > MNT/defrag` at the mount root consolidates free space:
# on a filesystem whose free space is all 128 KiB holes (aged_holes.py,
# two of every three 64 KiB files deleted: a third of each aligned 16 MiB
# window is data; with every other file deleted, windows held 2,032-2,064
# of 4,096 blocks, at compact's bound of half, and on a loaded CI machine
# none qualified), it
# clears at least one aligned region (an eighth of this small filesystem:
# 16 MiB) by moving small files into holes elsewhere. The largest free
# extent goes from at most 4 MiB to at least the region, as `freespace`
# and e2freefrag both say; no moved file gets more runs; content, times
# and holes unchanged; free blocks unchanged; e2fsck clean. Misuse:
# compact below the root (a directory, a file) EINVAL, by a user EPERM,
# with -o make_room=0 EOPNOTSUPP; a log line each, nothing moved.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
require_cmd e2fsck e2freefrag setpriv
HERE=$(cd "$(dirname "$0")" && pwd)
setup_image 256 -m 0 -b 4096
python3 "$HERE/aged_holes.py" "$SRC" 1400 64 0 3
sync

# max_free_kib: the largest free extent in KiB, from e2freefrag, with the
# filesystem unmounted meanwhile (mounted, the bitmaps on the device lag
# behind the journal until a checkpoint, even after sync).
max_free_kib() {
	umount "$SRC"
	e2freefrag "$LOOP" | sed -n 's/^Max\. free extent: \([0-9]*\) KB.*/\1/p'
	mount "$LOOP" "$SRC"
}
before_kib=$(max_free_kib)
[ "$before_kib" -le 4096 ] || fail "largest free extent $before_kib KiB before: not fragmented enough"
drop_caches
snap_before
free_before=$(stat -f -c %f "$SRC")

# Misuse first.
start_e4infofs -o allow_other
misuse() {
	local file=$1 want=$2 err
	err=$( { echo compact >"$file"; } 2>&1) && fail "compact > $file was accepted"
	[[ $err == *"$want"* ]] || fail "compact > $file: expected '$want', got: $err"
}
misuse "$MNT/small/defrag" "Invalid argument"
misuse "$MNT/filler/defrag" "Invalid argument"
misuse "$MNT/jobs" "Invalid argument"
err=$(setpriv --reuid 65534 --regid 65534 --clear-groups sh -c "echo compact > '$MNT/defrag'" 2>&1) &&
	fail "a user's compact was accepted"
[[ $err == *"Operation not permitted"* || $err == *"Permission denied"* ]] || fail "a user's compact: $err"
grep -q "refused: compact: not the mount root" "$T/daemon.log" || fail "no log line for compact below the root"
stop_e4infofs
mount_e4infofs "$SRC" "$T/m0" -o make_room=0
err=$( { echo compact >"$T/m0/defrag"; } 2>&1) && fail "compact with make_room=0 was accepted"
[[ $err == *"not supported"* ]] || fail "compact with make_room=0: $err"
stop_e4infofs "$T/m0"
check_eq "$(max_free_kib)" "$before_kib" "largest free extent after the refused compactions"

# Compact.
start_e4infofs
echo compact >"$MNT/defrag" || fail "echo compact > \$MNT/defrag"
log "status: $(grep -v ': 0$' "$MNT/defrag" | tr '\n' ' ')"
check_eq "$(dkey "$MNT/defrag" state)" done "state"
if [ "$(dkey "$MNT/defrag" room_files_moved)" -eq 0 ]; then
	# Seen once on a loaded machine (done in 0.011 s): what the job saw
	# (fail shows the daemon's log).
	log "freespace: $(tr '\n' ' ' <"$MNT/freespace")"
	log "small files: $(find "$SRC/small" -type f | wc -l), runs: $(filefrag "$SRC"/small/* | awk '{ n += $(NF - 2) } END { print n }')"
	fail "nothing moved"
fi
max_kib=$(sed -n 's/^max_free_extent_kib: //p' "$MNT/freespace")
stop_e4infofs
after_kib=$(max_free_kib)
check_eq "$max_kib" "$after_kib" "freespace's max_free_extent_kib vs e2freefrag"
[ "$after_kib" -ge 16384 ] || fail "largest free extent $before_kib -> $after_kib KiB"
log "largest free extent: $before_kib -> $after_kib KiB"

check_moved_intact "$free_before"
log "ok: largest free extent $before_kib -> $after_kib KiB"
