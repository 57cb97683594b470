#!/bin/bash
# pack.sh - packing measured on the benchmark corpora: the largest
# directory of each corpus (most regular files directly in it), on three
# identical copies of the aged image (contiguous free space): after
# `echo pack > DIR/defrag`, after `echo 1 > DIR/defrag` and after
# `e4defrag DIR`, its directory locality (tests/tools/dls.py, from
# filefrag -v in readdir order) and a cold read of its files in readdir
# order (caches dropped: seconds, and read requests of the loop device).
#
#   tests/bench/pack.sh [--corpus a|b]... [--e4infofs PATH] [--out FILE]
#                       [--scale F] [--seed N]
#
# Needs root; images under ${BENCH_DIR:-/var/tmp/e4bench} (about 3x the
# corpus). Writes a markdown report (default docs/benchmarks-pack.md).
set -u -o pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
INVOKED="tests/bench/pack.sh"
for _a in "$@"; do INVOKED+=" $(printf '%q' "$_a")"; done
CORPORA=()
E4INFOFS="$REPO/build/fusefs/e4infofs"
OUT="$REPO/docs/benchmarks-pack.md"
SCALE=1
SEED=1
while [ $# -gt 0 ]; do
	case $1 in
	--corpus) CORPORA+=("${2:?}"); shift ;;
	--e4infofs) E4INFOFS=${2:?}; shift ;;
	--out) OUT=${2:?}; shift ;;
	--scale) SCALE=${2:?}; shift ;;
	--seed) SEED=${2:?}; shift ;;
	*) sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
	shift
done
[ ${#CORPORA[@]} -eq 0 ] && CORPORA=(a b)
. "$HERE/lib.sh"
bench_init pack
E4INFOFS=$(cd "$(dirname "$E4INFOFS")" && pwd)/$(basename "$E4INFOFS")

# cold_read DIR DEV: "seconds requests" of reading DIR's files in readdir
# order (timed inside the reader, without its start-up).
cold_read() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	local r0 r1 secs
	r0=$(awk '{ print $1 }' "/sys/block/$(basename "$2")/stat")
	secs=$(python3 -c '
import os, sys, time
d = sys.argv[1]
t0 = time.monotonic()
for n in os.listdir(d):
    p = os.path.join(d, n)
    if os.path.isfile(p) and not os.path.islink(p):
        with open(p, "rb") as f:
            while f.read(1 << 20):
                pass
print("%.3f" % (time.monotonic() - t0))' "$1")
	r1=$(awk '{ print $1 }' "/sys/block/$(basename "$2")/stat")
	echo "$secs $((r1 - r0))"
}

# treat HOW IMG REL: on a copy of IMG, does HOW to REL and prints
# "dls seconds requests job_seconds".
treat() {
	local how=$1 img=$2 rel=$3 copy m dls t0 t1 read
	copy=$W/$how.img
	cp --sparse=always "$img" "$copy"
	m=$W/m-$how
	attach "$copy" "$m"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	t0=$EPOCHREALTIME
	case $how in
	pack | defrag)
		mkdir -p "$W/f-$how"
		"$E4INFOFS" "$m/tree" "$W/f-$how" -f >"$W/$how.log" 2>&1 &
		PIDS+=($!)
		for _ in $(seq 100); do findmnt -n "$W/f-$how" >/dev/null && break; sleep 0.1; done
		if [ "$how" = pack ]; then echo pack >"$W/f-$how/$rel/defrag"; else echo 1 >"$W/f-$how/$rel/defrag"; fi
		t1=$EPOCHREALTIME
		umount "$W/f-$how"
		;;
	e4defrag)
		e4defrag "$m/tree/$rel" >/dev/null 2>&1
		t1=$EPOCHREALTIME
		;;
	none)
		t1=$EPOCHREALTIME
		;;
	esac
	sync
	dls=$(python3 "$REPO/tests/tools/dls.py" "$m/tree/$rel" | awk '{ print $3 }')
	read=$(cold_read "$m/tree/$rel" "$DEV")
	echo "$dls $read $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
	detach "$m" "$DEV"
}

rows=()
for c in "${CORPORA[@]}"; do
	log "corpus $c: generating"
	img=$W/$c.img
	alloc=$(python3 "$HERE/age.py" --corpus "$c" --seed "$SEED" --scale "$SCALE" --plan |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["allocated_bytes"])')
	truncate -s $((alloc * 2 / 1048576 + 256))M "$img"
	mkfs.ext4 -q -F -b 4096 -m 0 -U 6f1e0f6e-4e4f-4b1a-9d3c-0e4b3e5c6a71 \
		-E hash_seed=6f1e0f6e-4e4f-4b1a-9d3c-0e4b3e5c6a72,lazy_itable_init=0,lazy_journal_init=0 "$img" >/dev/null
	attach "$img" "$W/gen"
	python3 "$HERE/age.py" --corpus "$c" --free contiguous --seed "$SEED" --scale "$SCALE" "$W/gen/tree" >/dev/null
	rel=$(python3 -c '
import os, sys
best = ("", -1)
for d, subs, files in os.walk(sys.argv[1]):
    n = sum(1 for f in files if os.path.isfile(os.path.join(d, f)))
    if n > best[1]:
        best = (os.path.relpath(d, sys.argv[1]), n)
print(best[0])' "$W/gen/tree")
	nfiles=$(find "$W/gen/tree/$rel" -maxdepth 1 -type f | wc -l)
	bytes=$(du -sb "$W/gen/tree/$rel" | awk '{ print $1 }')
	detach "$W/gen" "$DEV"
	log "corpus $c: largest directory $rel ($nfiles files, $bytes bytes)"
	for how in none pack defrag e4defrag; do
		r=$(treat "$how" "$img" "$rel")
		log "corpus $c: $how: $r"
		rows+=("| $c | $rel ($nfiles files) | $how | $(awk '{ printf "%s | %s s | %s | %s s", $1, $2, $3, $4 }' <<<"$r") |")
	done
	rm -f "$img"
done

{
	echo "# Packing: directory locality and a cold read in readdir order"
	echo
	echo "Command: \`$INVOKED\` at $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null), $(date -u +%Y-%m-%d), kernel $(uname -r)."
	echo "Each treatment on a fresh copy of the aged image (contiguous free space); locality by"
	echo "\`tests/tools/dls.py\` (1 - jumps / blocks in readdir order); the read is every file of the"
	echo "directory in readdir order, caches dropped, with the loop device's completed read requests."
	echo
	echo "| corpus | directory | treatment | dir_locality | cold read | read requests | job |"
	echo "|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
} >"$OUT"
log "wrote $OUT"
