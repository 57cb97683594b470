#!/usr/bin/env bash
# Exclusions: a file marked user.e4infofs.exclude, and every file below a
# directory marked so, are left alone by a subtree job, a file job and a
# pack: the same bytes and the same extents (filefrag -v) afterwards, while
# their fragmented siblings are defragmented; the status counts them as
# skipped_excluded. A mark of "0" excludes nothing. Making room moves no
# excluded file: on free space all 128 KiB holes between small files
# (aged_holes.py, two of every three deleted: a third of each window is
# data, under making room's bound of half, which every other file deleted
# sat exactly on) in a marked directory, a root job on a fragmented file
# makes no room and the small files keep their extents; with the mark
# removed but the first half of the files marked one by one, the same job
# makes room in the other half, F ends in one run and the marked files
# keep their extents (the no-room check can fail).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
setup_image 256

mark() { python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.e4infofs.exclude", sys.argv[2].encode())' "$1" "${2:-1}"; }

mkdir -p "$SRC/keep" "$SRC/ex/sub/deeper" "$SRC/zero"
"$MKFRAG" frag "$SRC/keep" k 6 256 4          # 64 runs each: defragmented
"$MKFRAG" frag "$SRC/keep" x 2 256 4          # marked one by one: left alone
"$MKFRAG" frag "$SRC/ex" e 2 256 4            # below a marked directory
"$MKFRAG" frag "$SRC/ex/sub" s 3 256 4
"$MKFRAG" frag "$SRC/ex/sub/deeper" d 2 256 4
"$MKFRAG" frag "$SRC/zero" z 2 256 4          # marked "0": defragmented
sync
mark "$SRC/keep/x0"
mark "$SRC/keep/x1"
mark "$SRC/ex"
mark "$SRC/zero/z0" 0
excluded=(keep/x0 keep/x1 ex/e0 ex/e1 ex/sub/s0 ex/sub/s1 ex/sub/s2 ex/sub/deeper/d0 ex/sub/deeper/d1)
defragged=(keep/k0 keep/k1 keep/k2 keep/k3 keep/k4 keep/k5 zero/z0 zero/z1)

# What an excluded file must keep: its bytes and its extents.
fingerprint() {
	local f
	for f in "${excluded[@]}"; do
		printf '%s %s\n' "$f" "$(sha256sum <"$SRC/$f" | cut -d' ' -f1)"
		filefrag -v "$SRC/$f" | sed -n '/^ *[0-9]*:/p'
	done
}
fingerprint >"$T/fp.before"
for f in "${excluded[@]}" "${defragged[@]}"; do
	r=$(filefrag_count "$SRC/$f")
	[ "$r" -ge 32 ] || fail "$f: $r runs: the image is not fragmented enough for the test"
done
snap_before
start_e4infofs

# ---- a file job on an excluded file: by its own mark, and by its directory's
for f in keep/x0 ex/sub/deeper/d1; do
	echo 1 >"$MNT/$f/defrag" || fail "file job on $f failed"
	check_eq "$(dkey "$MNT/$f/defrag" skipped_excluded)" 1 "$f: skipped_excluded of the file job"
	check_eq "$(dkey "$MNT/$f/defrag" improved)" 0 "$f: improved of the file job"
done

# ---- a pack of the marked directory moves nothing ----------------------------
echo pack >"$MNT/ex/sub/defrag" || fail "pack of ex/sub failed"
check_eq "$(dkey "$MNT/ex/sub/defrag" skipped_excluded)" 5 "pack ex/sub: skipped_excluded"
check_eq "$(dkey "$MNT/ex/sub/defrag" bytes_moved)" 0 "pack ex/sub: bytes_moved"

# ---- the subtree job ------------------------------------------------------------
echo 1 >"$MNT/defrag" || fail "the subtree job failed"
status=$(tr '\n' ' ' <"$MNT/defrag")
log "subtree job: $status"
check_eq "$(dkey "$MNT/defrag" state)" done "state"
check_eq "$(dkey "$MNT/defrag" skipped_excluded)" "${#excluded[@]}" "skipped_excluded of the subtree job"
check_eq "$(dkey "$MNT/defrag" files)" $((${#excluded[@]} + ${#defragged[@]})) "files of the subtree job"
check_eq "$(dkey "$MNT/defrag" improved)" "${#defragged[@]}" "improved of the subtree job"
stop_e4infofs

fingerprint >"$T/fp.after"
diff "$T/fp.before" "$T/fp.after" >&2 || fail "an excluded file changed its bytes or extents"
for f in "${defragged[@]}"; do
	check_eq "$(filefrag_count "$SRC/$f")" 1 "$f: runs after the job"
done
check_snap "the jobs"
# ---- making room moves no excluded file ---------------------------------------
umount "$SRC"
mkfs.ext4 -q -F -m 0 -b 4096 "$IMG"
mount "$LOOP" "$SRC"
python3 "$(dirname "$0")/aged_holes.py" "$SRC" 1400 64 16 3
mark "$SRC/small"
runs0=$(filefrag_count "$SRC/F")
smallmap() { find "$SRC/small" -type f -print0 | sort -z | xargs -0 filefrag -v | sed -n '/^ *[0-9]*:/p'; }
smallmap >"$T/small.before"
start_e4infofs
echo 1 >"$MNT/F/defrag" || fail "defrag of F beside marked small files"
check_eq "$(dkey "$MNT/F/defrag" room_files_moved)" 0 "room files moved out of a marked directory"
smallmap >"$T/small.after"
cmp -s "$T/small.before" "$T/small.after" || fail "making room moved excluded files"
runs_marked=$(filefrag_count "$SRC/F")
python3 -c 'import os, sys; os.removexattr(sys.argv[1], "user.e4infofs.exclude")' "$SRC/small"
# The first half of the small files marked one by one: making room passes
# over the windows that hold them and clears one in the other half.
half=("$SRC"/small/s00[0-6]*)
python3 -c 'import os, sys
for f in sys.argv[1:]: os.setxattr(f, "user.e4infofs.exclude", b"1")' "${half[@]}"
halfmap() { filefrag -v "${half[@]}" | sed -n '/^ *[0-9]*:/p'; }
halfmap >"$T/half.before"
sync # the given-up tries' donors are freed in an uncommitted transaction
echo 1 >"$MNT/F/defrag" || fail "defrag of F beside half the small files marked"
moved=$(dkey "$MNT/F/defrag" room_files_moved)
halfmap >"$T/half.after"
cmp -s "$T/half.before" "$T/half.after" || fail "making room moved files marked one by one"
stop_e4infofs
log "make room: F $runs0 runs; with small/ marked $runs_marked (no file moved); with ${#half[@]} of its files marked $(filefrag_count "$SRC/F") ($moved files moved)"
[ "$moved" -gt 0 ] || fail "no room made with half the files marked: the checks above test nothing"
check_eq "$(filefrag_count "$SRC/F")" 1 "F: runs after making room beside marked files"
