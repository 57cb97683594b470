#!/usr/bin/env bash
# Automatic defragmentation (-o autodefrag=1, issue 17) at its edges:
# 1. bad autodefrag options are refused at mount: the daemon exits
#    non-zero, nothing is mounted, and the message names the option as
#    given (autodefrag=2, autodefrag=-1, autodefrag_quiet=-1,
#    autodefrag_quiet=abc, autodefrag_quiet=nan, autodefrag_quiet=1e3,
#    autodefrag_window=inf, autodefrag_window=2000000000 ...); the
#    bounds themselves (quiet=0, window=0) mount.
# 2. with SOURCE a directory of the filesystem (SRC/in), files written
#    fragmented outside it (SRC/out) keep their extents, and are counted
#    as skipped{outside}, while files written inside are defragmented.
# 3. unmounting while autodefrag moves a file (defrag_mibps=4: a 32 MiB
#    file of 2,048 runs takes 8 s) ends the move and the daemon (status
#    0) within 5 s, leaves no mount, no leaked blocks (free blocks + the
#    file's blocks unchanged), e2fsck -fn clean, and both files' content
#    unchanged.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
setup_image 256

APP=(python3 "$_DEFRAG_DIR/appender.py")
QUIET=2
skipped() {
	awk -v n="e4infofs_autodefrag_skipped_total{reason=\"$1\"}" '$1 == n { print $2 }' "$MNT/metrics"
}
# The autodefrag line of the jobs file: "# autodefrag: queue N, checked N, moved N files (N bytes), current INO|-".
current() { sed -n 's/^# autodefrag: .*, current \(.*\)$/\1/p' "$MNT/jobs"; }
records() { filefrag -v "$@" | sed -n '/^ *[0-9]*:/p'; }
mkdir -p "$SRC/in" "$SRC/out"

# ---- 1. bad options refused at mount --------------------------------------------
for opt in autodefrag=2 autodefrag=-1 autodefrag= autodefrag=yes autodefrag_quiet=-1 autodefrag_quiet=abc \
	autodefrag_quiet=nan autodefrag_quiet=1e3 autodefrag_quiet= autodefrag_quiet=20000000 \
	autodefrag_window=inf autodefrag_window=-5 autodefrag_window=2000000000 autodefrag_window=0x10; do
	rc=0
	out=$(timeout 10 "$E4INFOFS" "$SRC/in" "$T/mnt" -f -o "autodefrag=1,$opt" 2>&1) || rc=$?
	[ "$rc" != 0 ] || fail "-o $opt: the daemon started"
	[ "$rc" != 124 ] || fail "-o $opt: the daemon still ran after 10 s"
	findmnt -n "$T/mnt" >/dev/null && fail "-o $opt: mounted"
	[[ $out == *"-o $opt:"* ]] || fail "-o $opt: no message naming it: $out"
done
log "bad autodefrag options refused, e.g.: $out"
# The bounds are accepted (and the parser is not refusing everything).
for opt in autodefrag_quiet=0,autodefrag_window=0 autodefrag=0,autodefrag_quiet=0.5; do
	mount_e4infofs "$SRC/in" "$T/mnt" -o "autodefrag=1,$opt"
	stop_e4infofs "$T/mnt"
done

# ---- 2. files written outside SOURCE --------------------------------------------
MNT=$T/mnt
mount_e4infofs "$SRC/in" "$MNT" -o "autodefrag=1,autodefrag_quiet=$QUIET,autodefrag_window=600,defrag_mibps=4"
grep -q "autodefrag on" "$T/daemon.log" || fail "no line in the log saying autodefrag is on"
"${APP[@]}" interleave "$SRC/out" 3 4 256     # 3 files of 1 MiB
"${APP[@]}" interleave "$SRC/in" 3 4 256
for f in "$SRC"/out/f{0..2} "$SRC"/in/f{0..2}; do
	r=$(filefrag_count "$f")
	[ "$r" -ge 8 ] || fail "$f: $r runs: not fragmented enough for the test"
done
records "$SRC"/out/f{0..2} >"$T/out.before"
"${FSNAP[@]}" snap "$SRC/out" >"$T/out.snap"
# Both sets are examined within quiet + 10 s: the inside ones moved, the
# outside ones skipped.
for ((i = 0; i < (QUIET + 10) * 5; i++)); do
	n=0
	for f in "$SRC"/in/f{0..2}; do
		[ "$(filefrag_count "$f")" -eq 1 ] && n=$((n + 1))
	done
	[ "$n" -eq 3 ] && [ "$(skipped outside)" -ge 3 ] && break
	sleep 0.2
done
check_eq "$n" 3 "files written inside SOURCE made contiguous"
[ "$(skipped outside)" -ge 3 ] || fail "skipped{outside} $(skipped outside) < 3: the outside writes were not examined"
records "$SRC"/out/f{0..2} >"$T/out.after"
cmp -s "$T/out.before" "$T/out.after" || fail "files outside SOURCE were moved: $(diff "$T/out.before" "$T/out.after" | head -5)"
"${FSNAP[@]}" snap "$SRC/out" >"$T/out.snap2"
cmp -s "$T/out.snap" "$T/out.snap2" || fail "files outside SOURCE changed"
check_eq "$(metric e4infofs_autodefrag_files_total)" 3 "files moved by autodefrag"
log "outside SOURCE: 3 files left alone (skipped{outside} $(skipped outside)); 3 inside moved"

# ---- 3. unmount while autodefrag moves a file -----------------------------------
free_blocks() { dumpe2fs -h "$LOOP" 2>/dev/null | sed -n 's/^Free blocks: *//p'; }
file_blocks() { echo $(($(stat -c %b "$1") * 512 / $(stat -f -c %S "$1"))); }
mkdir "$SRC/in/big"
"$MKFRAG" frag "$SRC/in/big" b 2 32768 16     # 2 x 32 MiB, 2,048 runs each
sync
# The baseline first, before the quiet time can end (QUIET s after the
# last write): a donor allocated by then would be in it (seen on a loaded
# machine, where reading the files took longer than QUIET).
blocks_before=$(($(file_blocks "$SRC/in/big/b0") + $(file_blocks "$SRC/in/big/b1")))
df_before=$(stat -f -c %f "$SRC")
[ "$(current)" = - ] || fail "autodefrag was already moving $(current) when the free blocks were counted"
runs0=$(filefrag_count "$SRC/in/big/b0") runs1=$(filefrag_count "$SRC/in/big/b1")
sha0=$("${FSNAP[@]}" sha "$SRC/in/big/b0")
sha1=$("${FSNAP[@]}" sha "$SRC/in/big/b1")
[ "$runs0" -ge 1000 ] && [ "$runs1" -ge 1000 ] || fail "big files with $runs0 and $runs1 runs: not fragmented enough"
cur=-
for ((i = 0; i < (QUIET + 10) * 10; i++)); do
	cur=$(current)
	[ "$cur" != - ] && break
	sleep 0.1
done
[ "$cur" != - ] || fail "autodefrag did not start moving a big file within $((QUIET + 10)) s: $(tail -n 1 "$MNT/jobs")"
sleep 1.5   # a few chunks into the move (4 MiB/s: 6 of 32 MiB)
t0=$(now_s)
stop_e4infofs "$MNT"
ms=$(elapsed_ms "$t0")
log "unmounted $ms ms after asking, while moving inode $cur"
_is_mounted "$MNT" && fail "$MNT still mounted"
findmnt -rn -o TARGET | grep -qxF "$MNT" && fail "$MNT still in the mount table"
[ "$ms" -le 5000 ] || fail "unmount took $ms ms while autodefrag moved a file"
r0=$(filefrag_count "$SRC/in/big/b0") r1=$(filefrag_count "$SRC/in/big/b1")
log "big files: runs $runs0 -> $r0, $runs1 -> $r1"
# One of them was mid-move: fewer runs than before, but not yet one.
{ [ "$r0" -lt "$runs0" ] && [ "$r0" -gt 1 ]; } || { [ "$r1" -lt "$runs1" ] && [ "$r1" -gt 1 ]; } ||
	fail "no big file was caught mid-move ($runs0 -> $r0, $runs1 -> $r1): the test proves nothing"
blocks_after=$(($(file_blocks "$SRC/in/big/b0") + $(file_blocks "$SRC/in/big/b1")))
sync
df_after=$(stat -f -c %f "$SRC")
# Free blocks alone differ by the extent tree blocks of a partly moved
# file; a leaked donor would show here.
check_eq $((df_after + blocks_after)) $((df_before + blocks_before)) \
	"free blocks + the big files' blocks across the unmount (a leaked donor?)"
umount "$SRC"
out=$(e2fsck -fn "$LOOP" 2>&1) || { echo "$out" >&2; fail "e2fsck -fn after the unmount found problems"; }
mount "$LOOP" "$SRC" || fail "cannot mount $SRC again"
check_eq "$("${FSNAP[@]}" sha "$SRC/in/big/b0")" "$sha0" "b0 content after the unmount"
check_eq "$("${FSNAP[@]}" sha "$SRC/in/big/b1")" "$sha1" "b1 content after the unmount"
log "ok"
