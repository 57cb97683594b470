#!/usr/bin/env bash
# Every regular file's extents file against filefrag: the "runs:" line equals
# filefrag's "N extents found", and every record (logical, physical, length)
# equals filefrag -v's. Directory extents files list the files directly
# inside with their size and run count.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
setup_image 256

mkdir -p "$SRC/frag" "$SRC/mixed/deeper" "$SRC/odd" "$SRC/emptydir" "$SRC/mixed/lost+found"
"$MKFRAG" frag "$SRC" rootfile 2 128 8             # files at the root too
"$MKFRAG" frag "$SRC/frag" f 4 1024 16              # 64 extents each
"$MKFRAG" frag "$SRC/frag" g 3 300 4                # odd size, small chunks
"$MKFRAG" frag "$SRC/mixed" contig 1 2048 2048      # contiguous
"$MKFRAG" frag "$SRC/mixed/deeper" big 2 8192 64    # 8 MiB, 128 extents
"$MKFRAG" frag "$SRC/mixed/lost+found" lf 2 256 16  # not the fs root's lost+found
"$MKFRAG" sparse "$SRC/mixed/sparse" 4096
"$MKFRAG" sparse "$SRC/mixed/sparse-tail" 300       # ends in a hole
"$MKFRAG" prealloc "$SRC/mixed/prealloc" 2048
"$MKFRAG" prealloc "$SRC/odd/prealloc-small" 16
: >"$SRC/odd/empty"
printf x >"$SRC/odd/one-byte"
head -c 4096 /dev/urandom >"$SRC/odd/one-page"
fallocate -l 1M "$SRC/odd/all-unwritten"
: >"$SRC/odd/keep-size-only"
fallocate -n -l 64K "$SRC/odd/keep-size-only"      # size 0, blocks allocated
truncate -s 10M "$SRC/odd/all-hole"
# One written and one unwritten record, physically adjacent: 2 records, 1 run.
fallocate -l 512K "$SRC/odd/split"
dd if=/dev/urandom of="$SRC/odd/split" bs=64K count=4 conv=notrunc,fsync status=none
# Written by the page cache (delayed allocation), not synced by hand.
head -c 300000 /dev/urandom >"$SRC/odd/delalloc"
sync

start_e4infofs

nfiles=0
while IFS= read -r -d '' f; do
	rel=${f#"$SRC"/}
	node=$MNT/$rel
	[ -d "$node" ] || fail "$rel: no directory node $node"
	ext=$(cat "$node/extents") || fail "$rel: cannot read extents"
	head -n 1 <<<"$ext" | grep -q '^#' || fail "$rel: extents has no '#' header: $(head -n 1 <<<"$ext")"
	[[ $(tail -n 1 <<<"$ext") =~ ^runs:\ ([0-9]+)$ ]] || fail "$rel: last line of extents is not 'runs: N': $(tail -n 1 <<<"$ext")"
	runs=${BASH_REMATCH[1]}
	want=$(filefrag_count "$f")
	check_eq "$runs" "$want" "$rel: runs vs filefrag"
	got_rec=$(awk '!/^#/ && !/^runs:/ { print $2, $3, $4 }' <<<"$ext")
	want_rec=$(filefrag_records "$f")
	if [ "$got_rec" != "$want_rec" ]; then
		diff <(echo "$want_rec") <(echo "$got_rec") | head -n 20 >&2 || true
		fail "$rel: records differ from filefrag -v (< filefrag, > e4infofs)"
	fi
	# Index column counts from 0; flags column present; 'last' on the last one.
	awk -v rel="$rel" '
		!/^#/ && !/^runs:/ {
			if (NF != 5 || $1 != n) { print rel ": bad record line: " $0; bad = 1 }
			n++; last = $5
		}
		END {
			if (n > 0 && last !~ /(^|,)last(,|$)/) { print rel ": last record has no last flag: " last; bad = 1 }
			exit bad
		}' <<<"$ext" >&2 || fail "$rel: malformed extents"
	nfiles=$((nfiles + 1))
done < <(find "$SRC" -xdev -path "$SRC/lost+found" -prune -o -type f -print0)
[ "$nfiles" -ge 20 ] || fail "only $nfiles files checked"
log "$nfiles file extents files match filefrag"

# The unwritten flag is reported.
grep -q 'unwritten' "$MNT/odd/all-unwritten/extents" || fail "all-unwritten: no unwritten flag"
check_eq "$(grep -c unwritten "$MNT/mixed/prealloc/extents")" \
	"$(filefrag -v "$SRC/mixed/prealloc" | grep -c unwritten)" "prealloc: unwritten records"
check_eq "$(tail -n 1 "$MNT/odd/empty/extents")" "runs: 0" "empty file"
check_eq "$(grep -vc '^#' "$MNT/odd/empty/extents")" 1 "empty file: lines besides header"

# Directory extents: one line per regular file directly inside.
while IFS= read -r -d '' d; do
	rel=${d#"$SRC"}
	rel=${rel#/}
	node=$MNT${rel:+/$rel}
	ext=$(cat "$node/extents") || fail "dir ${rel:-/}: cannot read extents"
	head -n 1 <<<"$ext" | grep -q '^#' || fail "dir ${rel:-/}: no '#' header"
	got=$(tail -n +2 <<<"$ext" | awk '{ n = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", n); print n }' | sort)
	want=$(find "$d" -mindepth 1 -maxdepth 1 -type f -printf '%f\n' | sort)
	check_eq "$got" "$want" "dir ${rel:-/}: names in extents"
	while read -r size runs best name; do
		f=$d/$name
		check_eq "$size" "$(stat -c %s "$f")" "dir ${rel:-/}: size of $name"
		if [ "$(stat -c %s "$f")" -eq 0 ]; then
			[ "$runs" = - ] || check_eq "$runs" "$(filefrag_count "$f")" "dir ${rel:-/}: runs of empty $name"
			continue
		fi
		fc=$(filefrag_count "$f")
		if [ "$fc" -eq 0 ]; then
			check_eq "$runs $best" "- -" "dir ${rel:-/}: $name has no blocks"
		else
			check_eq "$runs" "$fc" "dir ${rel:-/}: runs of $name"
			check_eq "$best" 1 "dir ${rel:-/}: best of $name"
		fi
	done < <(tail -n +2 <<<"$ext")
done < <(find "$SRC" -xdev -path "$SRC/lost+found" -prune -o -type d -print0)
check_eq "$(tail -n +2 "$MNT/emptydir/extents" | wc -l)" 0 "empty dir extents"

# Contents of the real files are untouched by the mount.
for i in 0 1 2 3; do check "frag/f$i content" "$MKFRAG" verify frag "$SRC/frag/f$i" "$i"; done
check "sparse content" "$MKFRAG" verify sparse "$SRC/mixed/sparse" 0
check "prealloc content" "$MKFRAG" verify prealloc "$SRC/mixed/prealloc" 0
stop_e4infofs
log "ok"
