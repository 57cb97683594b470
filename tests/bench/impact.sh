#!/bin/bash
# impact.sh - what a defrag job costs a reader on the same disk: a reader
# streams a contiguous file (dd, O_DIRECT, 1 MiB requests) alone, then
# while a throttled job (`echo "1 mibps=N" > defrag`) moves fragmented
# files on the same filesystem, then while an uncapped job does; the
# median of several reads each, reported as throughput and as a ratio to
# the reader alone, with the I/O schedulers of the loop device and of the
# disk under it (the job's threads are in the idle I/O class, which only
# a scheduler with classes, bfq, honours).
#
#   tests/bench/impact.sh [--mibps N] [--reads N] [--e4infofs PATH]
#                         [--mkfrag PATH] [--out FILE] [--smoke]
#
# Needs root; a 3 GiB image under ${BENCH_DIR:-/var/tmp/e4bench}, attached
# with direct I/O so that reads reach the disk rather than the host's page
# cache. Takes about two minutes. Writes a markdown report (default
# docs/benchmarks-impact.md). --smoke: a small image, one read each, the
# report to stdout only.
set -u -o pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
INVOKED="tests/bench/impact.sh"
for _a in "$@"; do INVOKED+=" $(printf '%q' "$_a")"; done
E4INFOFS="$REPO/build/fusefs/e4infofs"
MKFRAG="$REPO/build/tests/tools/mkfrag"
OUT="$REPO/docs/benchmarks-impact.md"
MIBPS=50
READS=5
SMOKE=0
while [ $# -gt 0 ]; do
	case $1 in
	--mibps) MIBPS=${2:?}; shift ;;
	--reads) READS=${2:?}; shift ;;
	--e4infofs) E4INFOFS=${2:?}; shift ;;
	--mkfrag) MKFRAG=${2:?}; shift ;;
	--out) OUT=${2:?}; shift ;;
	--smoke) SMOKE=1 ;;
	*) sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP [impact bench]: needs root" >&2; exit 77; }
BENCH_DIR=${BENCH_DIR:-/var/tmp/e4bench}
mkdir -p "$BENCH_DIR"
W=$(mktemp -d "$BENCH_DIR/impact.XXXXXX")
LOOP="" PID=""
log() { echo "[impact bench $(date +%T)] $*" >&2; }
die() { log "FAIL: $*"; exit 1; }
cleanup() {
	[ -n "$PID" ] && { fusermount3 -u "$W/mnt" 2>/dev/null || umount -l "$W/mnt" 2>/dev/null; }
	[ -n "$PID" ] && { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; }
	umount "$W/src" 2>/dev/null || umount -l "$W/src" 2>/dev/null
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$SMOKE" = 1 ]; then
	SIZE_MIB=512 STREAM_MIB=128 FILES=3 FILE_KIB=$((48 * 1024)) READS=1
else
	SIZE_MIB=3072 STREAM_MIB=1024 FILES=8 FILE_KIB=$((128 * 1024))
fi
truncate -s "${SIZE_MIB}M" "$W/img"
mkfs.ext4 -q -F "$W/img" || die "mkfs"
LOOP=$(losetup -f --show --direct-io=on "$W/img") || die "losetup"
mkdir -p "$W/src" "$W/mnt"
mount "$LOOP" "$W/src" || die "mount"
dd if=/dev/urandom of="$W/src/stream" bs=1M count="$STREAM_MIB" conv=fsync status=none || die "stream file"
mkdir "$W/src/t"
"$MKFRAG" frag "$W/src/t" f "$FILES" "$FILE_KIB" 16 || die "mkfrag"
sync
"$E4INFOFS" "$W/src" "$W/mnt" -f >"$W/daemon.log" 2>&1 &
PID=$!
for _ in $(seq 100); do [ -e "$W/mnt/score" ] && break; sleep 0.05; done
[ -e "$W/mnt/score" ] || die "e4infofs did not mount"

# read_mbps: one streaming read of the file, MB/s (10^6 bytes per second).
read_mbps() {
	local t0 t1
	t0=$EPOCHREALTIME
	dd if="$W/src/stream" of=/dev/null bs=1M iflag=direct status=none || die "read"
	t1=$EPOCHREALTIME
	awk -v b=$((STREAM_MIB << 20)) -v a="$t0" -v z="$t1" 'BEGIN { printf "%.0f", b / (z - a) / 1e6 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# reads_during OPTIONS: the median of READS reads while a job with OPTIONS
# runs on t/ (the job restarted on a fresh copy of t/'s layout each time:
# it is undone by refragmenting, so each read overlaps moving).
reads_during() {
	local opts=$1 i out=()
	for ((i = 0; i < READS; i++)); do
		rm -rf "$W/src/t" && mkdir "$W/src/t" && "$MKFRAG" frag "$W/src/t" f "$FILES" "$FILE_KIB" 16 || die "mkfrag"
		sync
		echo 3 >/proc/sys/vm/drop_caches
		echo "1${opts:+ $opts}" >"$W/mnt/t/defrag" &
		local job=$!
		for _ in $(seq 100); do grep -q '^state: running' "$W/mnt/t/defrag" && break; sleep 0.02; done
		sleep 0.5
		out+=("$(read_mbps)")
		grep -q '^state: running' "$W/mnt/t/defrag" || log "warning: the job ended before the read did"
		echo 0 >"$W/mnt/t/defrag" 2>/dev/null
		wait "$job"
	done
	printf '%s\n' "${out[@]}" | median
}

echo 3 >/proc/sys/vm/drop_caches
alone=()
for ((i = 0; i < READS; i++)); do alone+=("$(read_mbps)"); done
ALONE=$(printf '%s\n' "${alone[@]}" | median)
log "alone: ${alone[*]} MB/s"
CAPPED=$(reads_during "mibps=$MIBPS")
log "during mibps=$MIBPS: $CAPPED MB/s"
UNCAPPED=$(reads_during "")
SCHED_LOOP=$(sed 's/ *$//' "/sys/block/$(basename "$LOOP")/queue/scheduler")
log "during an uncapped job: $UNCAPPED MB/s"
DISK=$(lsblk -no PKNAME "$(findmnt -no SOURCE --target "$W" | head -1)" 2>/dev/null | head -1)
[ -n "$DISK" ] || DISK=$(basename "$(findmnt -no SOURCE --target "$W" | head -1)")
SCHED_DISK=$(sed 's/ *$//' "/sys/block/$DISK/queue/scheduler" 2>/dev/null || echo "?")
ratio() { awk -v a="$1" -v b="$ALONE" 'BEGIN { printf "%.2f", a / b }'; }

report() {
	cat <<EOF
# Benchmark: a reader beside a defrag job

Produced by \`$INVOKED\` on $(date -u +%Y-%m-%d) ($(uname -r), $(nproc) CPUs).
A ${SIZE_MIB} MiB ext4 image on a loop device with direct I/O
(scheduler \`$SCHED_LOOP\`) on \`$DISK\` (scheduler \`$SCHED_DISK\`).
The reader streams a contiguous ${STREAM_MIB} MiB file (\`dd iflag=direct
bs=1M\`); the job moves ${FILES} files of $((FILE_KIB / 1024)) MiB in 16 KiB
runs, refragmented before each read; median of ${READS} reads.

| reader | MB/s | of alone |
|---|---|---|
| alone | $ALONE | 1.00 |
| during \`echo "1 mibps=$MIBPS"\` | $CAPPED | $(ratio "$CAPPED") |
| during \`echo 1\` (no cap) | $UNCAPPED | $(ratio "$UNCAPPED") |

The job's threads are in the idle I/O class. The loop device has no
scheduler (\`none\` ignores I/O priorities); the disk's scheduler is shown
above. Whether the class reaches the disk through the loop device's own
workers is not measured here: on such a stack the rate cap is what
protects the reader.
EOF
}
if [ "$SMOKE" = 1 ]; then
	report
else
	report >"$OUT"
	log "wrote $OUT"
fi
