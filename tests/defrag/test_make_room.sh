#!/usr/bin/env bash
# Making room: an aged filesystem whose free space is all 64 KiB holes
# (aged_holes.py: small files written back to back, the rest taken, every
# other one deleted), and a 16 MiB file written into the holes. A root
# `echo 1 > F/defrag` empties a region by moving small files into holes
# elsewhere, then moves F there: F ends in 1 run (e4defrag on a copy of the
# image leaves it as it was; with -o make_room=0 e4infofs does too). No
# moved file gets more runs; every file keeps content, times and holes;
# free blocks are back where they were; e2fsck is clean. The status counts
# room_bytes_moved and room_files_moved apart. The file's owner, not root,
# gets no room made.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
require_cmd e2fsck setpriv
HERE=$(cd "$(dirname "$0")" && pwd)
setup_image 256 -m 0 -b 4096
python3 "$HERE/aged_holes.py" "$SRC" 1400 64 16
runs0=$(filefrag_count "$SRC/F")
[ "$runs0" -ge 50 ] || fail "F has $runs0 runs: the holes did not fragment it"

# e4defrag and e4infofs without making room, on copies of the image.
mount_copy_b "$T/b"
e4defrag "$T/b/F" >/dev/null 2>&1 || true
runs_e4defrag=$(filefrag_count "$T/b/F")
mount_e4infofs "$T/b" "$T/mb" -o make_room=0
echo 1 >"$T/mb/F/defrag" || fail "defrag with make_room=0"
runs_noroom=$(filefrag_count "$T/b/F")
check_eq "$(dkey "$T/mb/F/defrag" room_files_moved)" 0 "room files moved with make_room=0"
stop_e4infofs "$T/mb"
log "F: $runs0 runs; e4defrag: $runs_e4defrag; e4infofs -o make_room=0: $runs_noroom"
[ "$runs_e4defrag" -gt 10 ] || fail "e4defrag got F to $runs_e4defrag runs: the holes are not small enough to test anything"
[ "$runs_noroom" -gt 10 ] || fail "without making room F got to $runs_noroom runs: nothing to test"

# The owner of F (not root) gets no room made.
chown 65534 "$SRC/F"
start_e4infofs -o allow_other
setpriv --reuid 65534 --regid 65534 --clear-groups sh -c "echo 1 > '$MNT/F/defrag'" || fail "the owner's defrag of F"
check_eq "$(dkey "$MNT/F/defrag" room_files_moved)" 0 "room made for a user's job"
chown 0 "$SRC/F"

# Root makes room.
drop_caches
snap_before
free_before=$(stat -f -c %f "$SRC")
drop_caches
echo 1 >"$MNT/F/defrag" || fail "echo 1 > F/defrag"
log "status: $(grep -v ': 0$' "$MNT/F/defrag" | tr '\n' ' ')"
check_eq "$(dkey "$MNT/F/defrag" state)" done "state"
check_eq "$(filefrag_count "$SRC/F")" 1 "runs of F after making room"
check_eq "$(dkey "$MNT/F/defrag" runs_after)" 1 "runs_after"
moved=$(dkey "$MNT/F/defrag" room_bytes_moved)
files=$(dkey "$MNT/F/defrag" room_files_moved)
[ "$moved" -gt 0 ] && [ "$files" -gt 0 ] || fail "no room_bytes_moved/room_files_moved in the status"
grep -q "made room for inode" "$T"/daemon*.log || fail "no log line for the room made"
log "room: $files files, $moved bytes moved"

# A subtree job makes room too (its third pass): two 4 MiB files written
# into the holes.
mkdir "$SRC/d"
for g in g1 g2; do
	head -c 4M /dev/urandom >"$SRC/d/$g"
	sync
done
g_before=$(($(filefrag_count "$SRC/d/g1") + $(filefrag_count "$SRC/d/g2")))
[ "$g_before" -ge 20 ] || fail "d/g1 and d/g2 have $g_before runs: nothing to test"
"${FSNAP[@]}" snap "$SRC/d" >"$T/d.before"
echo 1 >"$MNT/d/defrag" || fail "echo 1 > d/defrag"
log "d status: $(grep -v ': 0$' "$MNT/d/defrag" | tr '\n' ' ')"
check_eq "$(filefrag_count "$SRC/d/g1") $(filefrag_count "$SRC/d/g2")" "1 1" "runs of d/g1 and d/g2 after the subtree job"
[ "$(dkey "$MNT/d/defrag" room_files_moved)" -gt 0 ] || fail "the subtree job made no room"
# Its log names each file room was made for (relative to d), with its runs.
for g in g1 g2; do
	grep -qE "made room for inode $(stat -c %i "$SRC/d/$g") \($g\): .*; runs [0-9]+ -> 1\b" "$T"/daemon*.log ||
		fail "no log line for the room made for d/$g: $(grep 'room' "$T"/daemon*.log | tail -n 3)"
done
"${FSNAP[@]}" snap "$SRC/d" >"$T/d.after"
diff "$T/d.before" "$T/d.after" >/dev/null || fail "d/ changed"
rm -r "$SRC/d"
stop_e4infofs

check_moved_intact "$free_before"
log "ok: F $runs0 -> 1 run (e4defrag $runs_e4defrag, make_room=0 $runs_noroom), $files files moved to make room"
