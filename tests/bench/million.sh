#!/bin/bash
# million.sh - the scale benchmark of issue 18: the million-file corpora of
# age.py (shapes flat, deep, small), each on its own fresh ext4 image,
# measured with e4infofs beside e4defrag -c and filefrag.
#
#   tests/bench/million.sh [--shape flat|deep|small]... [--scale F] [--runs N]
#                          [--seed N] [--out FILE] [--e4infofs PATH] [--keep]
#
#   --shape S        a shape (repeatable; default flat deep small)
#   --scale F        age.py's scale (default 1: 1,000,000 files per shape)
#   --runs N         reads per timed read figure, medians reported (default 20)
#   --out FILE       the markdown report (default docs/benchmarks-million.md)
#   --e4infofs PATH  the daemon (default build/fusefs/e4infofs of the repo)
#   --keep           keep the work directory under $BENCH_DIR
#
# Per shape: cold `e4defrag -c` and cold filefrag of every file (caches
# dropped before each); then e4infofs (default options, the watch on):
# the daemon's resident memory after mounting (its baseline) and after the
# cold read of the root's `score`, and from them the bytes per cached file;
# the re-read of the root's `score` (median of --runs) and the directories
# it opened (e4infofs_dir_opens_total); the read after appending a byte to
# one file (median of --runs, each after its own append); for flat, `ls -l`
# of one directory of 10,000 files, raw and through the mount, cold and
# warm. Defragmentation is not measured here (tests/bench/run.sh does it on
# corpora a, b, c).
#
# Disk: one image at a time in ${BENCH_DIR:-/var/tmp/e4bench}, about
# 1.3 x the corpus (12 GB at --scale 1). Time at --scale 1: about 25 min
# per shape on the machine of docs/benchmarks.md (generation most of it).
# Needs root, /dev/fuse, loop devices, e2fsprogs, python3: skipped (77)
# otherwise. Drops the page cache (echo 3 > drop_caches) before each cold
# figure. Every mount and loop device is undone at exit.

set -u -o pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
INVOKED="tests/bench/million.sh"
for _a in "$@"; do INVOKED+=" $(printf '%q' "$_a")"; done
SHAPES=()
SCALE=1
RUNS=20
SEED=1
OUT=$REPO/docs/benchmarks-million.md
E4INFOFS=$REPO/build/fusefs/e4infofs
KEEP=0

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--shape) SHAPES+=("${2:?}"); shift ;;
	--scale) SCALE=${2:?}; shift ;;
	--runs) RUNS=${2:?}; shift ;;
	--seed) SEED=${2:?}; shift ;;
	--out) OUT=${2:?}; shift ;;
	--e4infofs) E4INFOFS=${2:?}; shift ;;
	--keep) KEEP=1 ;;
	-h | --help) usage ;;
	*) echo "million.sh: unknown argument '$1'" >&2; usage ;;
	esac
	shift
done
[ ${#SHAPES[@]} -eq 0 ] && SHAPES=(flat deep small)
for s in "${SHAPES[@]}"; do
	[[ $s =~ ^(flat|deep|small)$ ]] || { echo "million.sh: bad shape '$s'" >&2; exit 2; }
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "million.sh: --runs must be >= 1" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/fuse ] || ! losetup -f >/dev/null 2>&1; then
	echo "SKIP [million]: needs root, /dev/fuse and a free loop device" >&2
	exit 77
fi
[ -x "$E4INFOFS" ] || { echo "FAIL [million]: $E4INFOFS is not an executable" >&2; exit 1; }
E4INFOFS=$(cd "$(dirname "$E4INFOFS")" && pwd)/$(basename "$E4INFOFS")

BENCH_DIR=${BENCH_DIR:-/var/tmp/e4bench}
mkdir -p "$BENCH_DIR" || exit 1
W=$(mktemp -d "$BENCH_DIR/million.XXXXXX") || exit 1
ROWS=$W/rows.md
: >"$ROWS"
T_START=$EPOCHREALTIME
FPID=""
DEV=""

log() { echo "[million $(date +%T)] $*" >&2; }
die() { echo "FAIL [million]: $*" >&2; exit 1; }

cleanup() {
	local rc=$?
	set +e
	trap - EXIT INT TERM
	if [ -n "$FPID" ]; then
		fusermount3 -u "$W/mnt" 2>/dev/null || umount -l "$W/mnt" 2>/dev/null
		wait "$FPID" 2>/dev/null
	fi
	findmnt -n --mountpoint "$W/src" >/dev/null 2>&1 &&
		{ umount "$W/src" 2>/dev/null || { sleep 1; umount "$W/src"; } || umount -l "$W/src"; }
	[ -n "$DEV" ] && losetup -d "$DEV" 2>/dev/null
	if findmnt -rn -o TARGET | grep -qF "$W/"; then
		echo "million.sh: something is still mounted under $W, not removed" >&2
		[ "$rc" -eq 0 ] && rc=1
	elif [ "$KEEP" = 1 ]; then
		echo "million.sh: kept $W" >&2
	else
		rm -rf --one-file-system "$W"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'log interrupted; exit 130' INT
trap 'exit 143' TERM

drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# secs CMD...: runs CMD (output discarded), prints its wall time in seconds.
secs() {
	local t0=$EPOCHREALTIME
	"$@" >/dev/null 2>&1 || log "warning: '$*' exited with status $?"
	awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }'
}
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
metric() { awk -v n="$2" '$1 == n { print $2 }' "$1/metrics"; }
# read_ms FILE N [CHANGED]: median milliseconds of N reads of FILE (open,
# read, close in one process); with CHANGED, each after appending a byte
# to that file (not timed).
read_ms() {
	python3 - "$@" <<'EOF'
import statistics, sys, time
path, n = sys.argv[1], int(sys.argv[2])
changed = sys.argv[3] if len(sys.argv) > 3 else None
t = []
for _ in range(n):
    if changed:
        with open(changed, "ab") as f:
            f.write(b"y")
    s = time.perf_counter()
    with open(path, "rb") as f:
        f.read()
    t.append((time.perf_counter() - s) * 1000)
print(f"{statistics.median(t):.2f}")
EOF
}
jget() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
ls_cold() { drop_caches; secs ls -l "$1"; }

bench_shape() {
	local shape=$1 plan files dirs alloc inodes size_mib avail gen t_e4d score t_ff base t_cold rss
	local per_file reread opens0 opens1 changed after ls_rc ls_rw ls_mc ls_mw listing="" leaf
	plan=$(python3 "$HERE/age.py" --corpus "$shape" --seed "$SEED" --scale "$SCALE" --plan) || die "age.py --plan"
	files=$(jget "$plan" files)
	dirs=$(jget "$plan" dirs)
	alloc=$(jget "$plan" allocated_bytes)
	inodes=$((files + dirs + files / 10 + 1024))
	size_mib=$((alloc * 13 / 10 / 1048576 + inodes / 4096 + 512))
	avail=$(df --output=avail -k "$BENCH_DIR" | tail -n 1)
	[ "$avail" -ge $((size_mib * 1024 + 1048576)) ] || die "not enough room in $BENCH_DIR for $size_mib MiB"
	log "$shape: $files files, $dirs directories, image $size_mib MiB"
	truncate -s "${size_mib}M" "$W/img" && mkfs.ext4 -q -F -N "$inodes" "$W/img" || die "mkfs"
	DEV=$(losetup -f --show --direct-io=on "$W/img") || die "losetup"
	mkdir -p "$W/src" "$W/mnt"
	mount -o noatime "$DEV" "$W/src" || die "mount"
	gen=$(python3 "$HERE/age.py" --corpus "$shape" --seed "$SEED" --scale "$SCALE" "$W/src/tree") || die "age.py"
	log "$shape: generated in $(jget "$gen" seconds) s"

	drop_caches
	t_e4d=$(awk -v a="$EPOCHREALTIME" 'BEGIN { printf "%s", a }')
	score=$(e4defrag -c "$W/src/tree" 2>/dev/null | sed -n 's/.*Fragmentation score[[:space:]]*\([0-9]*\).*/\1/p')
	t_e4d=$(awk -v a="$t_e4d" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
	drop_caches
	t_ff=$(secs sh -c "find '$W/src/tree' -type f -print0 | xargs -0 filefrag")
	log "$shape: e4defrag -c $t_e4d s (score $score), filefrag $t_ff s"

	"$E4INFOFS" "$W/src" "$W/mnt" -f >"$W/daemon.log" 2>&1 &
	FPID=$!
	local i
	for ((i = 0; i < 200; i++)); do
		findmnt -n -t fuse.e4infofs "$W/mnt" >/dev/null 2>&1 && break
		sleep 0.05
	done
	findmnt -n -t fuse.e4infofs "$W/mnt" >/dev/null 2>&1 || die "e4infofs did not mount"
	base=$(rss_kib "$FPID")
	drop_caches
	t_cold=$(secs cat "$W/mnt/tree/score")
	rss=$(rss_kib "$FPID")
	per_file=$(((rss - base) * 1024 / files))
	local got
	got=$(cat "$W/mnt/tree/score")
	[ "$got" = "$score" ] || log "warning: e4infofs score $got, e4defrag -c $score"
	metric "$W/mnt" e4infofs_dir_opens_total >/dev/null # its own first scans
	opens0=$(metric "$W/mnt" e4infofs_dir_opens_total)
	reread=$(read_ms "$W/mnt/tree/score" "$RUNS")
	opens1=$(metric "$W/mnt" e4infofs_dir_opens_total)
	leaf=$(find "$W/src/tree" -type f -name f00000 | sort | tail -n 1)
	after=$(read_ms "$W/mnt/tree/score" "$RUNS" "$leaf")
	changed=$(metric "$W/mnt" e4infofs_dir_opens_total)
	log "$shape: cold $t_cold s, $per_file bytes/file, re-read $reread ms ($((opens1 - opens0)) dirs opened), after a change $after ms"
	if [ "$shape" = flat ]; then
		ls_rc=$(ls_cold "$W/src/tree/f00")
		ls_rw=$(secs ls -l "$W/src/tree/f00")
		ls_mc=$(ls_cold "$W/mnt/tree/f00")
		ls_mw=$(secs ls -l "$W/mnt/tree/f00")
		listing="ls -l of 10,000 files: raw $ls_rc s cold, $ls_rw s warm; through e4infofs $ls_mc s cold, $ls_mw s warm"
		log "$shape: $listing"
	fi
	printf '| %s | %s | %s | %s s | %s s | %s s (%s) | %s s | %s / %s | %s KiB | %s | %s ms (%s opened) | %s ms (%s opened for %s reads) | %s |\n' \
		"$shape" "$files" "$dirs" "$(jget "$gen" seconds)" "$t_e4d" "$t_cold" \
		"$(awk -v a="$t_cold" -v b="$t_e4d" 'BEGIN { printf "%.2fx", a / b }')" "$t_ff" \
		"$got" "$score" "$base" "$per_file" "$reread" "$((opens1 - opens0))" "$after" \
		"$((changed - opens1))" "$RUNS" "${listing:--}" >>"$ROWS"

	fusermount3 -u "$W/mnt" || die "cannot unmount $W/mnt"
	wait "$FPID" || log "warning: e4infofs exited with status $?"
	FPID=""
	umount "$W/src" || die "cannot unmount $W/src"
	losetup -d "$DEV"
	DEV=""
	rm -f "$W/img"
}

for s in "${SHAPES[@]}"; do bench_shape "$s"; done
minutes=$(awk -v a="$T_START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", (b - a) / 60 }')
{
	echo "# Benchmarks at a million files"
	echo
	echo "Produced by \`$INVOKED\` on $(date -u +%FT%TZ), in $minutes min, commit $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown);"
	echo "$(nproc) cores, kernel \`$(uname -r)\`. Generated: do not edit by hand, run the command again."
	echo "The method is in [tests/bench/million.sh](../tests/bench/million.sh), the corpora in [tests/bench/age.py](../tests/bench/age.py) (seed $SEED, scale $SCALE)."
	echo
	echo "| shape | files | dirs | generation | e4defrag -c (cold) | e4infofs cold scan (vs e4defrag -c) | filefrag, every file (cold) | score (e4infofs / e4defrag -c) | daemon baseline RSS | bytes per cached file | re-read of score (median) | read after one change (median) | listing |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	cat "$ROWS"
} >"$OUT"
log "wrote $OUT"
