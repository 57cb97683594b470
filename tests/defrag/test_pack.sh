#!/usr/bin/env bash
# `echo pack > DIR/defrag`: every regular file directly in DIR laid end to
# end in readdir order, then each subdirectory's files in a region of
# their own. Directory locality (tests/tools/dls.py, from filefrag -v in
# readdir order, apart from e4infofs) goes from below 0.9 to at least 0.99
# in every directory; content, atime/mtime/ctime and holes unchanged; a
# hard link pair moved once; one-block files packed too; the status adds
# up; e2fsck clean. A user's pack moves only their own files (root's are
# skipped not-owner). Misuse: pack on a file node, pack in the root's
# jobs file, any other word: EINVAL and nothing moved.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
require_cmd setpriv e2fsck
HERE=$(cd "$(dirname "$0")" && pwd)
DLS=(python3 "$HERE/../tools/dls.py")
setup_image 512

mkdir -p "$SRC/p/sub/deeper" "$SRC/q" "$SRC/other"
# Interleaved files: mkfrag allocates them round-robin, so neither a file
# nor the directory reads in one run.
"$MKFRAG" frag "$SRC/p" f 24 96 8
"$MKFRAG" frag "$SRC/p" one 6 4 4            # one block each
"$MKFRAG" sparse "$SRC/p/sparse" 1024
"$MKFRAG" prealloc "$SRC/p/prealloc" 256
: >"$SRC/p/empty"
"$MKFRAG" frag "$SRC/p/sub" g 8 256 16
"$MKFRAG" frag "$SRC/p/sub/deeper" h 4 128 8
ln "$SRC/p/f0" "$SRC/p/sub/f0-link"
"$MKFRAG" frag "$SRC/q" u 6 128 8
"$MKFRAG" frag "$SRC/other" o 6 128 8
chown 65534:65534 "$SRC/q" "$SRC/q"/u[0-3]  # u4 and u5 stay root's
sync
for d in p p/sub p/sub/deeper; do
	read -r j b dls < <("${DLS[@]}" "$SRC/$d")
	log "before: $d jumps $j blocks $b dls $dls"
	awk -v v="$dls" 'BEGIN { exit !(v < 0.9) }' || fail "$d already has locality $dls: nothing to test"
done
runs_before=$(sum_runs "$SRC/p")
drop_caches
"${FSNAP[@]}" snap "$SRC" >"$T/snap.before"
start_e4infofs -o allow_other

# ---- misuse: EINVAL, nothing done ------------------------------------------
misuse() {
	local word=$1 file=$2 err
	err=$( { echo "$word" >"$file"; } 2>&1) && fail "'$word' > $file was accepted"
	[[ $err == *"Invalid argument"* ]] || fail "'$word' > $file: expected EINVAL, got: $err"
}
misuse pack "$MNT/p/f1/defrag"
misuse pack "$MNT/jobs"
misuse "pack now" "$MNT/p/defrag"
misuse packing "$MNT/p/defrag"
grep -q "refused: pack: not a directory" "$T/daemon.log" || fail "no log line for pack on a file"
check_eq "$(sum_runs "$SRC/p")" "$runs_before" "runs after the refused writes"
check_eq "$(dkey "$MNT/p/defrag" state)" idle "state of p after the refused writes"

# ---- pack p ----------------------------------------------------------------
drop_caches
echo pack >"$MNT/p/defrag" || fail "echo pack > p/defrag failed"
status=$(cat "$MNT/p/defrag")
log "status: $(tr '\n' ' ' <<<"$status")"
check_eq "$(dkey "$MNT/p/defrag" state)" done "state"
check_eq "$(dkey "$MNT/p/defrag" failed)" 0 "failed"
# Each inode once (f0 and its link), the empty file skipped as too-small.
nfiles=$(find "$SRC/p" -type f -printf '%i\n' | sort -u | wc -l)
check_eq "$(dkey "$MNT/p/defrag" files)" "$nfiles" "files"
check_eq "$(dkey "$MNT/p/defrag" skipped)" 1 "skipped (the empty file)"
check_eq "$(dkey "$MNT/p/defrag" skipped_too-small)" 1 "skipped too-small"
check_eq "$(dkey "$MNT/p/defrag" improved)" $((nfiles - 1)) "improved"
for d in p p/sub p/sub/deeper; do
	read -r j b dls < <("${DLS[@]}" "$SRC/$d")
	log "after: $d jumps $j blocks $b dls $dls"
	awk -v v="$dls" 'BEGIN { exit !(v >= 0.99) }' || fail "$d: locality $dls after pack, want >= 0.99"
done
runs_after=$(sum_runs "$SRC/p")
[ "$runs_after" -lt "$runs_before" ] || fail "runs $runs_before -> $runs_after"
# The job counts f0 once; filefrag's list has it under both names.
check_eq "$(dkey "$MNT/p/defrag" runs_after)" $((runs_after - $(filefrag_count "$SRC/p/sub/f0-link"))) "runs_after vs filefrag"
# The figures of the mount follow (the job forgets what it moved).
tail -n 1 "$MNT/p/f1/extents" | grep -qx "runs: 1" || fail "p/f1/extents after pack: $(tail -n 1 "$MNT/p/f1/extents")"

# ---- a user's pack ----------------------------------------------------------
q_root_runs=$(filefrag "$SRC/q/u4" | grep -o '[0-9]* extent' | cut -d' ' -f1)
setpriv --reuid 65534 --regid 65534 --clear-groups sh -c "echo pack > '$MNT/q/defrag'" ||
	fail "a user's pack of their directory failed"
check_eq "$(dkey "$MNT/q/defrag" improved)" 4 "the user's files packed"
check_eq "$(dkey "$MNT/q/defrag" skipped_not-owner)" 2 "root's files skipped"
check_eq "$(filefrag "$SRC/q/u4" | grep -o '[0-9]* extent' | cut -d' ' -f1)" "$q_root_runs" "runs of root's file"
# Another user's directory: the trigger is not theirs to write.
err=$(setpriv --reuid 65534 --regid 65534 --clear-groups sh -c "echo pack > '$MNT/other/defrag'" 2>&1) &&
	fail "a user packed root's directory"
[[ $err == *"Permission denied"* ]] || fail "a user's pack of root's directory: $err"

# ---- nothing lost -----------------------------------------------------------
stop_e4infofs
drop_caches
"${FSNAP[@]}" snap "$SRC" >"$T/snap.after"
diff "$T/snap.before" "$T/snap.after" >"$T/snap.diff" ||
	fail "content, times or holes changed: $(head -5 "$T/snap.diff")"
umount "$SRC"
e2fsck -fn "$LOOP" >"$T/fsck.log" 2>&1 || fail "e2fsck: $(tail -5 "$T/fsck.log")"
mount "$LOOP" "$SRC"
log "ok: runs $runs_before -> $runs_after"
