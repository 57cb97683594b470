# lib.sh - what the side benchmarks (large.sh, pack.sh, throttle.sh) share:
# a work directory under ${BENCH_DIR:-/var/tmp/e4bench}, log and die lines
# named after the benchmark, and loop devices, mounts and daemons undone at
# exit, also on failure or Ctrl-C. Sourced, after the arguments are read:
#
#   bench_init NAME      root check (exit 77), W=work dir, traps
#   attach IMG DIR [losetup options...]
#                        loop device (DEV) and mount at DIR (noatime)
#   detach DIR DEV       unmount and free the loop device
#
# With BENCH_KEEP=1 the work directory stays (its images removed) for
# looking at the daemon's log and the jobs' statuses afterwards.

bench_init() {
	BENCH_NAME=$1
	[ "$(id -u)" -eq 0 ] || { echo "SKIP [$BENCH_NAME bench]: needs root" >&2; exit 77; }
	BENCH_DIR=${BENCH_DIR:-/var/tmp/e4bench}
	mkdir -p "$BENCH_DIR"
	W=$(mktemp -d "$BENCH_DIR/$BENCH_NAME.XXXXXX")
	MOUNTS=()
	LOOPS=()
	PIDS=()
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
}

log() { echo "[$BENCH_NAME bench $(date +%T)] $*" >&2; }
die() { echo "FAIL [$BENCH_NAME bench]: $*" >&2; exit 1; }

bench_cleanup() {
	local i
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTS[$i]}" 2>/dev/null || umount -l "${MOUNTS[$i]}" 2>/dev/null || true
	done
	for i in "${PIDS[@]}"; do kill "$i" 2>/dev/null || true; done
	for i in "${LOOPS[@]}"; do losetup -d "$i" 2>/dev/null || true; done
	if [ "${BENCH_KEEP:-0}" = 1 ]; then
		find "$W" \( -name '*.img' -o -name img \) -delete 2>/dev/null
		echo "[$BENCH_NAME bench] kept $W" >&2
	else
		rm -rf "$W"
	fi
}

attach() {
	local img=$1 dir=$2
	shift 2
	DEV=$(losetup -f --show "$@" "$img") || die "losetup $img"
	LOOPS+=("$DEV")
	mkdir -p "$dir"
	mount -o noatime "$DEV" "$dir" || die "mount $DEV"
	MOUNTS+=("$dir")
}

detach() {
	umount "$1" || die "umount $1"
	losetup -d "$2"
	local i
	for i in "${!MOUNTS[@]}"; do [ "${MOUNTS[$i]}" = "$1" ] && unset 'MOUNTS[i]'; done
	for i in "${!LOOPS[@]}"; do [ "${LOOPS[$i]}" = "$2" ] && unset 'LOOPS[i]'; done
	MOUNTS=("${MOUNTS[@]}")
	LOOPS=("${LOOPS[@]}")
}
