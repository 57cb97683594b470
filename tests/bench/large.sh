#!/bin/bash
# large.sh - large files at their ideal, in every run: 12 files of 64-256
# MiB (3 each of 64, 96, 200 and 256 MiB), each group's files allocated
# interleaved in 1-8 MiB chunks (mkfrag frag), on a fresh 3 GiB ext4 image
# per run. On two identical copies: `echo 1 > MNT/defrag` (e4infofs) and
# `e4defrag` (e2fsprogs). Per file, filefrag's run count against its
# ideal, ceil(blocks / 32768) (one run per 128 MiB extent); the largest
# free extent before (e2freefrag), which every file fits.
#
#   tests/bench/large.sh [--runs N] [--e4infofs PATH] [--out FILE]
#
# Needs root; about 6 GiB under ${BENCH_DIR:-/var/tmp/e4bench} (BENCH_KEEP=1
# keeps the daemon's log and the job statuses there: lib.sh). Writes a
# markdown report (default docs/benchmarks-large.md). Exit status 0 when
# every step worked (a file above its ideal is reported, not a failure).
set -u -o pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
INVOKED="tests/bench/large.sh"
for _a in "$@"; do INVOKED+=" $(printf '%q' "$_a")"; done
RUNS=5
E4INFOFS="$REPO/build/fusefs/e4infofs"
MKFRAG="$REPO/build/tests/tools/mkfrag"
OUT="$REPO/docs/benchmarks-large.md"
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=${2:?}; shift ;;
	--e4infofs) E4INFOFS=${2:?}; MKFRAG=$(dirname "$2")/../tests/tools/mkfrag; shift ;;
	--out) OUT=${2:?}; shift ;;
	*) sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
	shift
done
. "$HERE/lib.sh"
bench_init large
E4INFOFS=$(cd "$(dirname "$E4INFOFS")" && pwd)/$(basename "$E4INFOFS")
[ -x "$E4INFOFS" ] && [ -x "$MKFRAG" ] || die "build first ($E4INFOFS, $MKFRAG)"

# Group: count size_kib chunk_kib.
GROUPS_=("3 65536 1024" "3 98304 2048" "3 204800 4096" "3 262144 8192")

# per_file DIR: "name runs ideal" per file, from filefrag.
per_file() {
	local f n size blocks
	for f in "$1"/*; do
		n=$(filefrag "$f" | sed -n 's/.*: \([0-9]*\) extents\{0,1\} found/\1/p')
		size=$(stat -c %s "$f")
		blocks=$(((size + 4095) / 4096))
		echo "$(basename "$f") $n $(((blocks + 32767) / 32768))"
	done
}

# summary FILE: "runs at_ideal files worst_excess"
summary() {
	awk '{ r += $2; f++; if ($2 <= $3) ok++; if ($2 - $3 > w) w = $2 - $3 } END { printf "%d %d %d %d", r, ok, f, w }' "$1"
}

rows=()
for ((run = 1; run <= RUNS; run++)); do
	log "run $run: generating"
	img=$W/aged.img
	rm -f "$img"
	truncate -s 3G "$img"
	mkfs.ext4 -q -F -b 4096 -m 0 -E lazy_itable_init=0,lazy_journal_init=0 "$img" >/dev/null || die "mkfs"
	attach "$img" "$W/gen" --direct-io=on
	mkdir -p "$W/gen/tree"
	g=0
	for spec in "${GROUPS_[@]}"; do
		read -r cnt kib chunk <<<"$spec"
		"$MKFRAG" frag "$W/gen/tree" "g${g}_" "$cnt" "$kib" "$chunk" || die "mkfrag"
		g=$((g + 1))
	done
	sync
	per_file "$W/gen/tree" >"$W/before.txt"
	detach "$W/gen" "$DEV"
	maxfree=$(e2freefrag "$img" | sed -n 's/.*Max\. free extent: \([0-9]*\) KB.*/\1/p')
	cp --sparse=always "$img" "$W/e4d.img"

	# e4infofs
	attach "$img" "$W/i" --direct-io=on
	devi=$DEV
	mkdir -p "$W/fi"
	"$E4INFOFS" "$W/i/tree" "$W/fi" -f >>"$W/daemon.log" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 100); do findmnt -n "$W/fi" >/dev/null && break; sleep 0.1; done
	sync
	echo 3 >/proc/sys/vm/drop_caches
	t0=$EPOCHREALTIME
	echo 1 >"$W/fi/defrag" || die "echo 1 > defrag: $(cat "$W/fi/defrag")"
	sync
	ti=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
	cat "$W/fi/defrag" >"$W/status.$run.txt"
	fusermount3 -u "$W/fi"
	wait "${PIDS[-1]}"
	per_file "$W/i/tree" >"$W/e4i.$run.txt"
	detach "$W/i" "$devi"

	# e4defrag
	attach "$W/e4d.img" "$W/e" --direct-io=on
	deve=$DEV
	sync
	echo 3 >/proc/sys/vm/drop_caches
	t0=$EPOCHREALTIME
	e4defrag "$W/e/tree" >"$W/e4defrag.$run.log" 2>&1
	sync
	td=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
	per_file "$W/e/tree" >"$W/e4d.$run.txt"
	detach "$W/e" "$deve"
	rm -f "$W/e4d.img"

	read -r rb _ nf _ < <(summary "$W/before.txt")
	read -r ri oki _ wi < <(summary "$W/e4i.$run.txt")
	read -r rd okd _ wd < <(summary "$W/e4d.$run.txt")
	ideal=$(awk '{ s += $3 } END { print s }' "$W/before.txt")
	room=$(grep -E '^room_(files|bytes)_moved:' "$W/status.$run.txt" | tr '\n' ' ')
	log "run $run: runs before $rb, ideal $ideal; e4infofs $ri ($oki/$nf at ideal, ${ti} s); e4defrag $rd ($okd/$nf, ${td} s); $room"
	rows+=("| $run | $rb | $ideal | $(awk -v k="$maxfree" 'BEGIN { printf "%.0f MiB", k / 1024 }') | $ri | $oki / $nf | $wi | $ti s | $rd | $okd / $nf | $wd | $td s |")
	paste "$W/e4i.$run.txt" "$W/e4d.$run.txt" | awk '{ printf "%s %s/%s %s/%s\n", $1, $2, $3, $5, $6 }' >"$W/files.$run.txt"
done

{
	echo "# Large files at their ideal, run after run"
	echo
	echo "Command: \`$INVOKED\` at $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null), $(date -u +%Y-%m-%d), kernel $(uname -r)."
	echo "Each run: a fresh 3 GiB ext4 image (4 KiB blocks), 12 files (3 each of 64, 96, 200 and"
	echo "256 MiB; each group's 3 files allocated interleaved in chunks of 1, 2, 4 and 8 MiB by"
	echo "\`mkfrag frag\`), then \`echo 1 > MNT/defrag\` and \`e4defrag\` on identical copies, caches"
	echo "dropped first, \`sync\` timed. Runs per file from filefrag; a file's ideal is"
	echo "ceil(blocks / 32768), one run per 128 MiB extent (18 in all). Every file fits the largest"
	echo "free extent before the job."
	echo
	echo "| run | runs before | ideal | largest free extent | e4infofs runs | at ideal | worst excess | time | e4defrag runs | at ideal | worst excess | time |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Per file in the last run (runs / ideal, e4infofs then e4defrag):"
	echo
	echo '```'
	cat "$W/files.$RUNS.txt"
	echo '```'
} >"$OUT"
log "wrote $OUT"
