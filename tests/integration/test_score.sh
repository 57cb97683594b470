#!/usr/bin/env bash
# score of directories equals e4defrag -c's "Fragmentation score" (±1), and
# score of a file node follows e4defrag's formula over that one file.
# No hard links here (e4infofs counts an inode once, e4defrag every name).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
setup_image 256 -b 4096

mkdir -p "$SRC/heavy" "$SRC/contig" "$SRC/mid" "$SRC/mixed/sub/lost+found" "$SRC/single" \
	"$SRC/emptydir" "$SRC/only-empty"
"$MKFRAG" frag "$SRC/heavy" h 6 512 4            # 128 runs of 1 block each
"$MKFRAG" frag "$SRC/contig" a 1 1024 1024
"$MKFRAG" frag "$SRC/contig" b 1 3072 64
"$MKFRAG" frag "$SRC/contig" c 1 200 4
"$MKFRAG" frag "$SRC/mid" m 2 1024 72            # ~15 runs per 256 blocks
"$MKFRAG" frag "$SRC/mixed" x 3 256 16
"$MKFRAG" frag "$SRC/mixed" big 1 8192 8192
"$MKFRAG" sparse "$SRC/mixed/sparse" 2048
"$MKFRAG" prealloc "$SRC/mixed/sub/prealloc" 1024
"$MKFRAG" frag "$SRC/mixed/sub" s 2 128 8
"$MKFRAG" frag "$SRC/mixed/sub/lost+found" l 2 128 4   # counted: not the fs root's
for i in $(seq 1 40); do printf 'x%s' "$i" >"$SRC/mixed/sub/one$i"; done   # one block each
: >"$SRC/mixed/empty"
: >"$SRC/only-empty/empty"
truncate -s 1M "$SRC/mixed/hole-only"
# A single fragmented file: made with a partner file, removed after.
"$MKFRAG" frag "$SRC/single" only 2 512 32 && rm "$SRC/single/only1"
# In the filesystem root's lost+found: skipped by e4defrag and e4infofs.
"$MKFRAG" frag "$SRC/lost+found" lost 3 512 4
"$MKFRAG" frag "$SRC" root 2 256 8
sync

start_e4infofs

for d in "" heavy contig mid mixed mixed/sub mixed/sub/lost+found single; do
	want=$(e4defrag_score "$SRC${d:+/$d}")
	got=$(cat "$MNT${d:+/$d}/score") || fail "cannot read score of /$d"
	[[ $got =~ ^[0-9]+$ ]] || fail "score of /$d is not an integer: '$got'"
	[ "$got" -le 100 ] || fail "score of /$d out of range: $got"
	within "$got" "$want" 1 || fail "score of /$d: e4infofs $got, e4defrag -c $want"
	log "/$d: score $got (e4defrag -c: $want)"
done
# The bands must come out as intended, or the comparison above proves little.
s=$(cat "$MNT/heavy/score"); [ "$s" -ge 90 ] || fail "heavy: score $s, expected >= 90"
s=$(cat "$MNT/contig/score"); [ "$s" -le 10 ] || fail "contig: score $s, expected <= 10"
s=$(cat "$MNT/mid/score"); { [ "$s" -ge 31 ] && [ "$s" -le 55 ]; } || fail "mid: score $s, expected 31..55"

# Nothing scorable: 0.
check_eq "$(cat "$MNT/emptydir/score")" 0 "empty dir score"
check_eq "$(cat "$MNT/only-empty/score")" 0 "dir with an empty file: score"
check_eq "$(cat "$MNT/only-empty/empty/score")" 0 "empty file score"
check_eq "$(cat "$MNT/mixed/hole-only/score")" 0 "file without blocks: score"

# File nodes: e4defrag's formula over one file (best = 1 below 2 GiB).
file_score() {
	filefrag -v "$1" | awk -F: '
		/^ *[0-9]+: / { now++; gsub(/ /, "", $4); blocks += $4 }
		END {
			if (blocks == 0) { print 0; exit }
			ratio = (now - 1) * 100 / blocks
			s = ratio > 10 ? 80 + 20 * ratio / 100 : 8 * ratio
			if (s > 100) s = 100
			printf "%d\n", s + 0.5
		}'
}
n=0
while IFS= read -r -d '' f; do
	rel=${f#"$SRC"/}
	want=$(file_score "$f")
	got=$(cat "$MNT/$rel/score") || fail "cannot read score of file $rel"
	[[ $got =~ ^[0-9]+$ ]] || fail "score of file $rel is not an integer: '$got'"
	within "$got" "$want" 1 || fail "score of file $rel: e4infofs $got, formula over filefrag -v $want"
	n=$((n + 1))
done < <(find "$SRC" -xdev -path "$SRC/lost+found" -prune -o -type f -size +0 -print0)
log "$n file scores follow the formula"

# A directory holding one file scores like that file.
check_eq "$(cat "$MNT/single/only0/score")" "$(cat "$MNT/single/score")" "single file vs its dir"

stop_e4infofs
log "ok"
