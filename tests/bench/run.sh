#!/bin/bash
# run.sh - benchmarks of e4infofs against e4defrag, filefrag and the physical
# limit, side by side on identical copies of aged ext4 images.
#
#   tests/bench/run.sh [--smoke] [--corpus a|b|c]... [--variant contiguous|cheese]...
#                      [--runs N] [--defrag-runs N] [--out FILE] [--e4infofs PATH]
#                      [--seed N] [--scale F] [--verify] [--keep]
#
#   --smoke          tiny corpora (--scale 0.004), 1 run, --verify; must
#                    finish in well under a minute; needs --out
#   --corpus X       run corpus X only (repeatable; default a b c)
#   --variant V      free-space variant (repeatable; default contiguous cheese)
#   --runs N         runs per measurement, medians reported (default 3; smoke 1)
#   --defrag-runs N  runs of the defrag comparison and of the O_DIRECT copy
#                    (default: --runs); each run defragments two fresh
#                    copies of the aged image
#   --out FILE       the markdown report (default docs/benchmarks.md)
#   --e4infofs PATH  the daemon (default build/fusefs/e4infofs of the repo)
#   --seed N         age.py's seed (default 1)
#   --scale F        age.py's scale (default 1, smoke 0.004)
#   --no-compact     skip `echo compact` on the cheese variants
#   --verify         after the defrags, check both trees have the same content
#   --keep           keep the work directory (images, logs) under $BENCH_DIR
#   --note TEXT      a line for the report's notes (repeatable)
#
# Needs root, /dev/fuse, loop devices, e2fsprogs, python3: skipped (exit 77)
# otherwise, or fails when E4INFO_REQUIRE_PRIVILEGED=1. Images go to
# ${BENCH_DIR:-/var/tmp/e4bench}. Exit status 0 when every measurement
# worked and the checks held (scores equal +-1, a change visible, the
# daemon's figures equal to FIEMAP's, clean unmounts); a missed target is
# reported in the markdown, never a failure. Every mount and loop device is
# undone at exit, also on failure or Ctrl-C. See docs/benchmarks.md.

set -u -o pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
INVOKED="tests/bench/run.sh"
for _a in "$@"; do INVOKED+=" $(printf '%q' "$_a")"; done

SMOKE=0
CORPORA=()
VARIANTS=()
RUNS=""
DRUNS=""
OUT=""
E4INFOFS="$REPO/build/fusefs/e4infofs"
SEED=1
SCALE=""
VERIFY=0
COMPACT=1
KEEP=0
NOTES=()

usage() {
	sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--smoke) SMOKE=1 ;;
	--corpus) CORPORA+=("${2:?}"); shift ;;
	--variant) VARIANTS+=("${2:?}"); shift ;;
	--runs) RUNS=${2:?}; shift ;;
	--defrag-runs) DRUNS=${2:?}; shift ;;
	--out) OUT=${2:?}; shift ;;
	--e4infofs) E4INFOFS=${2:?}; shift ;;
	--seed) SEED=${2:?}; shift ;;
	--scale) SCALE=${2:?}; shift ;;
	--verify) VERIFY=1 ;;
	--no-compact) COMPACT=0 ;;
	--keep) KEEP=1 ;;
	--note) NOTES+=("${2:?}"); shift ;;
	-h | --help) usage ;;
	*) echo "run.sh: unknown argument '$1'" >&2; usage ;;
	esac
	shift
done
[ ${#CORPORA[@]} -eq 0 ] && CORPORA=(a b c)
[ ${#VARIANTS[@]} -eq 0 ] && VARIANTS=(contiguous cheese)
for c in "${CORPORA[@]}"; do [[ $c =~ ^[abc]$ ]] || { echo "run.sh: bad corpus '$c'" >&2; exit 2; }; done
for v in "${VARIANTS[@]}"; do [[ $v =~ ^(contiguous|cheese)$ ]] || { echo "run.sh: bad variant '$v'" >&2; exit 2; }; done
if [ "$SMOKE" = 1 ]; then
	: "${RUNS:=1}" "${SCALE:=0.004}"
	VERIFY=1
	[ -n "$OUT" ] || { echo "run.sh: --smoke needs --out FILE" >&2; exit 2; }
fi
: "${RUNS:=3}" "${SCALE:=1}"
: "${DRUNS:=$RUNS}"
: "${OUT:=$REPO/docs/benchmarks.md}"
[[ $RUNS =~ ^[1-9][0-9]*$ && $DRUNS =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --runs/--defrag-runs must be >= 1" >&2; exit 2; }

# ---- privileges ------------------------------------------------------------
_why=""
if [ "$(id -u)" -ne 0 ]; then _why="needs root"
elif [ ! -c /dev/fuse ]; then _why="needs /dev/fuse"
elif ! losetup -f >/dev/null 2>&1; then _why="needs a free loop device"
elif ! grep -qw ext4 /proc/filesystems; then _why="needs ext4 in the kernel"
fi
if [ -n "$_why" ]; then
	if [ "${E4INFO_REQUIRE_PRIVILEGED:-0}" = 1 ]; then
		echo "FAIL [bench]: $_why, and E4INFO_REQUIRE_PRIVILEGED=1 makes privileged tests mandatory" >&2
		exit 1
	fi
	echo "SKIP [bench]: $_why" >&2
	exit 77
fi
for _c in mkfs.ext4 losetup findmnt filefrag e4defrag fusermount3 python3 xargs; do
	command -v "$_c" >/dev/null 2>&1 || { echo "FAIL [bench]: needs the command '$_c'" >&2; exit 1; }
done
[ -x "$E4INFOFS" ] || { echo "FAIL [bench]: $E4INFOFS is not an executable (build first, or --e4infofs)" >&2; exit 1; }
E4INFOFS=$(cd "$(dirname "$E4INFOFS")" && pwd)/$(basename "$E4INFOFS")

AGE=(python3 "$HERE/age.py")
TOOL=(python3 "$HERE/benchtool.py")
BENCH_DIR=${BENCH_DIR:-/var/tmp/e4bench}
mkdir -p "$BENCH_DIR" || exit 1
W=$(mktemp -d "$BENCH_DIR/run.XXXXXX") || exit 1
RES=$W/results.jsonl
: >"$RES"
ERRORS=0
T_START=$EPOCHREALTIME

log() { echo "[bench $(date +%T)] $*" >&2; }

# ---- cleanup: every mount and loop device this script made -----------------
declare -A FUSE_PID=()    # fuse mount point -> daemon pid
declare -A EXT_DEV=()     # ext4 mount point -> loop device
LOOPS=()                  # loop devices attached (detached at exit)

_is_mounted() { findmnt -n --mountpoint "$1" >/dev/null 2>&1; }

_kill_wait() { # pid secs: wait for pid (a child) to exit, kill it after secs
	local pid=$1 secs=$2 i
	for ((i = 0; i < secs * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null; sleep 1; kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
}

cleanup() {
	local rc=$? m pid dev
	set +e
	trap - EXIT INT TERM
	for m in "${!FUSE_PID[@]}"; do
		fusermount3 -u "$m" 2>/dev/null || umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	for m in "${!FUSE_PID[@]}"; do
		_kill_wait "${FUSE_PID[$m]}" 10
	done
	for m in "${!EXT_DEV[@]}"; do
		umount "$m" 2>/dev/null || { sleep 1; umount "$m" 2>/dev/null; } || umount -l "$m" 2>/dev/null
	done
	# anything else still mounted under $W (e.g. interrupted half-way), deepest first
	findmnt -rn -o TARGET,FSTYPE 2>/dev/null | awk -v w="$W/" 'index($1, w) == 1' | sort -r |
		while read -r m t; do
			[ "$t" = fuse.e4infofs ] && fusermount3 -u "$m" 2>/dev/null
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
		done
	for dev in "${LOOPS[@]}"; do
		losetup -d "$dev" 2>/dev/null
	done
	# loop devices of images under $W that were attached but not recorded
	losetup -l -n -O NAME,BACK-FILE 2>/dev/null | awk -v w="$W/" 'index($2, w) == 1 { print $1 }' |
		while read -r dev; do losetup -d "$dev" 2>/dev/null; done
	# the raw figures survive the work directory (report.py can render them)
	cp -f "$RES" "$BENCH_DIR/last-results.jsonl" 2>/dev/null
	[ -f "$W/meta.json" ] && cp -f "$W/meta.json" "$BENCH_DIR/last-meta.json" 2>/dev/null
	if [ "$rc" -ne 0 ] && [ -s "$W/daemon.log" ]; then
		echo "----- last lines of the daemons' log -----" >&2
		tail -n 20 "$W/daemon.log" >&2
	fi
	if findmnt -rn -o TARGET | grep -qF "$W/"; then
		echo "run.sh: something is still mounted under $W, not removed" >&2
		[ "$rc" -eq 0 ] && rc=1
	elif [ "$KEEP" = 1 ]; then
		echo "run.sh: kept $W" >&2
	else
		rm -rf --one-file-system "$W"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'log interrupted; exit 130' INT
trap 'exit 143' TERM

die() { echo "FAIL [bench]: $*" >&2; exit 1; }
# A measurement that did not work: recorded, the run goes on, exit status 1.
err() {
	log "ERROR: $*"
	ERRORS=$((ERRORS + 1))
	printf '{"c":"%s","v":"%s","m":"error","r":0,"s":%s}\n' "${CUR_C:-}" "${CUR_V:-}" \
		"$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$*")" >>"$RES"
}
# rec METRIC RUN VALUE: a number of the current corpus/variant.
rec() {
	local x=${3:-null}
	[[ $x =~ ^-?[0-9]+(\.[0-9]+)?$ ]] || x=null
	printf '{"c":"%s","v":"%s","m":"%s","r":%s,"x":%s}\n' "$CUR_C" "$CUR_V" "$1" "$2" "$x" >>"$RES"
}
# rec_json KEY JSON: a JSON document of the current corpus/variant.
rec_json() {
	printf '{"c":"%s","v":"%s","m":"%s","r":0,"j":%s}\n' "$CUR_C" "$CUR_V" "$1" "$2" >>"$RES"
}

drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# since T0 [T1]: seconds from T0 to T1 (default: now)
since() { awk -v a="$1" -v b="${2:-$EPOCHREALTIME}" 'BEGIN { printf "%.4f", b - a }'; }
# slurp FILE: reads FILE into SLURP with shell builtins, starting no process
# (starting cat costs ~1.5 ms here, more than a re-read of score itself).
# Returns 1 when FILE cannot be opened or read.
slurp() {
	local fd st=0
	SLURP=""
	exec {fd}<"$1" || return 1
	IFS= read -r -d '' SLURP <&"$fd" || st=$?
	exec {fd}<&-
	# read's status is 1 at end of file: the normal case here
	[ "$st" -le 1 ]
}
# timed_slurp FILE KEY RUN: slurp FILE and record the seconds it took as
# KEY of RUN; the status is slurp's.
timed_slurp() {
	local t0=$EPOCHREALTIME t1 st=0
	slurp "$1" || st=$?
	t1=$EPOCHREALTIME
	rec "$2" "$3" "$(since "$t0" "$t1")"
	return "$st"
}
# jget JSON KEY: a value of a flat JSON object (numbers, simple strings, null)
jget() {
	local re="\"$2\": *(\"[^\"]*\"|[^,}]*)" v
	[[ $1 =~ $re ]] || return 1
	v=${BASH_REMATCH[1]}
	v=${v#\"}
	echo "${v%\"}"
}
loop_reads() { awk '{ print $1 }' "/sys/block/$(basename "$1")/stat"; }
stat_key() { sed -n "s/^$2: //p" "$1"; }

# mount_img IMG DIR: attach IMG (direct I/O) and mount it on DIR; sets DEV.
mount_img() {
	local img=$1 dir=$2
	mkdir -p "$dir"
	DEV=$(losetup -f --show --direct-io=on "$img") || die "losetup $img failed"
	LOOPS+=("$DEV")
	mount -o noatime "$DEV" "$dir" || die "mount $DEV ($img) on $dir failed"
	EXT_DEV[$dir]=$DEV
}
umount_img() {
	local dir=$1 dev=${EXT_DEV[$1]} i
	for i in 1 2 3 4 5; do
		umount "$dir" 2>/dev/null && break
		sleep 1
	done
	_is_mounted "$dir" && die "cannot unmount $dir"
	unset "EXT_DEV[$dir]"
	losetup -d "$dev" 2>/dev/null
	local keep=()
	for i in "${LOOPS[@]}"; do [ "$i" != "$dev" ] && keep+=("$i"); done
	LOOPS=("${keep[@]}")
}

# fuse_mount SRC MNT [opts...]: e4infofs in the foreground, in the
# background of this shell; sets FPID.
fuse_mount() {
	local src=$1 mnt=$2 i
	shift 2
	mkdir -p "$mnt"
	"$E4INFOFS" "$src" "$mnt" -f "$@" >>"$W/daemon.log" 2>&1 &
	FPID=$!
	FUSE_PID[$mnt]=$FPID
	for ((i = 0; i < 200; i++)); do
		findmnt -n -t fuse.e4infofs "$mnt" >/dev/null 2>&1 && return 0
		kill -0 "$FPID" 2>/dev/null || die "e4infofs $src $mnt $* exited before mounting (see $W/daemon.log)"
		sleep 0.05
	done
	die "e4infofs $src $mnt did not mount within 10 s"
}
fuse_umount() {
	local mnt=$1 pid=${FUSE_PID[$1]} i st=0
	for i in 1 2 3 4 5; do
		fusermount3 -u "$mnt" 2>/dev/null && break
		sleep 0.5
	done
	_is_mounted "$mnt" && die "cannot unmount $mnt"
	for ((i = 0; i < 300; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		err "e4infofs (pid $pid) still running 30 s after unmounting $mnt; killed"
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" || st=$?
	unset "FUSE_PID[$mnt]"
	[ "$st" = 0 ] || err "e4infofs of $mnt exited with status $st after unmount"
}

# read_all ROOT DEV KEY RUN: cold read of every file; seconds and read requests.
read_all() {
	local root=$1 dev=$2 key=$3 run=$4 r0 t0 t
	drop_caches
	r0=$(loop_reads "$dev")
	t0=$EPOCHREALTIME
	find "$root" -type f -print0 | xargs -0 -r cat >/dev/null || err "$key: reading every file under $root failed"
	t=$(since "$t0")
	rec "${key}_s" "$run" "$t"
	rec "${key}_reqs" "$run" "$(($(loop_reads "$dev") - r0))"
}

# ---- one corpus, one variant ---------------------------------------------
bench_one() {
	local c=$1 v=$2 plan files alloc data size_mib need avail d img out r t0 t
	CUR_C=$c CUR_V=$v
	d=$W/$c-$v
	mkdir -p "$d"
	plan=$("${AGE[@]}" --corpus "$c" --seed "$SEED" --scale "$SCALE" --plan) || die "age.py --plan failed"
	files=$(jget "$plan" files)
	alloc=$(jget "$plan" allocated_bytes)
	size_mib=$((alloc * 2 / 1048576 + (SMOKE ? 64 : 256)))
	[ "$size_mib" -lt 128 ] && size_mib=128
	# aged image + 2 copies + the O_DIRECT copy written into the aged image
	need=$(((alloc * 4) / 1024 + 1048576))
	avail=$(df --output=avail -k "$BENCH_DIR" | tail -n 1)
	[ "$avail" -ge "$need" ] || die "not enough room in $BENCH_DIR: need $((need / 1024)) MiB, have $((avail / 1024)) MiB"
	log "corpus $c/$v: $files files, $((alloc / 1048576)) MiB, image $size_mib MiB"

	# 1. the aged image, made once
	img=$d/aged.img
	truncate -s "${size_mib}M" "$img"
	mkfs.ext4 -q -F -b 4096 -m 0 -U 6f1e0f6e-4e4f-4b1a-9d3c-0e4b3e5c6a71 \
		-E hash_seed=6f1e0f6e-4e4f-4b1a-9d3c-0e4b3e5c6a72,lazy_itable_init=0,lazy_journal_init=0 \
		"$img" || die "mkfs.ext4 failed"
	mount_img "$img" "$d/m"
	out=$("${AGE[@]}" --corpus "$c" --free "$v" --seed "$SEED" --scale "$SCALE" \
		--manifest "$d/manifest.tsv" "$d/m/tree") || die "age.py failed"
	rec_json age "$out"
	rec gen_s 1 "$(jget "$out" seconds)"
	CHANGE_FILE=$(tail -n 1 "$d/manifest.tsv" | cut -f 1)
	LIST_DIR=$(jget "$plan" listing_dir)
	umount_img "$d/m"

	# 2. defrag: e4defrag and e4infofs on fresh identical copies
	for ((r = 1; r <= DRUNS; r++)); do
		bench_defrag "$d" "$r"
	done
	[ "$v" = cheese ] && [ "$COMPACT" = 1 ] && bench_compact "$d"
	# 3. physical limit: O_DIRECT copy of the fragmented files' bytes (part
	# of the defrag comparison: --defrag-runs times)
	mount_img "$img" "$d/m"
	for ((r = 1; r <= DRUNS; r++)); do
		out=$("${TOOL[@]}" odcopy "$d/m/tree" "$d/m/odcopy") || err "O_DIRECT copy failed"
		rec odcopy_s "$r" "$(jget "$out" seconds)"
		rec odcopy_bytes "$r" "$(jget "$out" bytes)"
		rec odcopy_files "$r" "$(jget "$out" files)"
		rm -rf --one-file-system "$d/m/odcopy"
		sync
	done
	# 4. scans and 5. listing on the aged image (the scans append to a file)
	for ((r = 1; r <= RUNS; r++)); do
		bench_scan "$d" "$r"
	done
	if [ "$LIST_DIR" != null ]; then
		for ((r = 1; r <= RUNS; r++)); do
			bench_list "$d" "$r"
		done
	fi
	umount_img "$d/m"
	[ "$KEEP" = 1 ] || rm -f "$d"/*.img
}

bench_defrag() {
	local d=$1 r=$2 out t0 t st n_e4i n_e4d img
	log "corpus $CUR_C/$CUR_V: defrag run $r"
	for img in e4d e4i; do
		cp --sparse=always "$d/aged.img" "$d/$img.img" || die "cp failed"
	done
	sync
	mount_img "$d/e4i.img" "$d/i"
	local dev_i=$DEV
	mount_img "$d/e4d.img" "$d/e"
	local dev_e=$DEV
	# benefit: cold read before (the copies are identical: read one)
	read_all "$d/i/tree" "$dev_i" read_before "$r"

	# e4infofs: its plan first, on a mount of its own (reading it scans the
	# tree, which the timed job must do itself)
	fuse_mount "$d/i/tree" "$d/fi"
	cat "$d/fi/plan" >"$d/plan.$r.txt" || err "cannot read plan"
	fuse_umount "$d/fi"
	for k in files runs_now runs_expected seconds_expected room_files cost_jobs room_bytes_expected; do
		rec "plan_$k" "$r" "$(stat_key "$d/plan.$r.txt" "$k" | head -n 1)"
	done
	fuse_mount "$d/i/tree" "$d/fi"
	drop_caches
	t0=$EPOCHREALTIME
	st=0
	echo 1 >"$d/fi/defrag" || st=$?
	sync
	t=$(since "$t0")
	cat "$d/fi/defrag" >"$d/defrag-status.$r.txt"
	[ "$st" = 0 ] || err "echo 1 > defrag failed (status $st); status: $(tr '\n' ' ' <"$d/defrag-status.$r.txt")"
	rec e4i_defrag_s "$r" "$t"
	for k in improved optimal no-gain skipped failed runs_before runs_after bytes_moved \
		room_bytes_moved room_files_moved room_gave_way; do
		rec "e4i_status_$k" "$r" "$(stat_key "$d/defrag-status.$r.txt" "$k" | head -n 1)"
	done
	out=$("${TOOL[@]}" layout "$d/i/tree") || err "layout of the e4infofs image failed"
	rec e4i_runs_after "$r" "$(jget "$out" runs)"
	rec e4i_layout_after "$r" "$(jget "$out" layout_score)"
	rec e4i_fragmented_after "$r" "$(jget "$out" fragmented_files)"
	# the daemon's own figures after its defrag must equal FIEMAP's
	cat "$d/fi/stats" >"$d/stats-after-e4i.$r.txt" || err "cannot read stats after defrag"
	n_e4i=$(stat_key "$d/stats-after-e4i.$r.txt" runs)
	[ "$n_e4i" = "$(jget "$out" runs)" ] ||
		err "e4infofs stats after its own defrag say runs: $n_e4i, FIEMAP says $(jget "$out" runs)"
	rec e4i_stats_layout_after "$r" "$(stat_key "$d/stats-after-e4i.$r.txt" layout_score)"
	fuse_umount "$d/fi"

	# e4defrag
	drop_caches
	t0=$EPOCHREALTIME
	st=0
	e4defrag "$d/e/tree" >"$d/e4defrag.$r.log" 2>&1 || st=$?
	sync
	t=$(since "$t0")
	grep -q 'Success:' "$d/e4defrag.$r.log" || err "e4defrag failed (status $st): $(tail -n 3 "$d/e4defrag.$r.log")"
	rec e4d_defrag_s "$r" "$t"
	rec e4d_status "$r" "$st"
	out=$("${TOOL[@]}" layout "$d/e/tree") || err "layout of the e4defrag image failed"
	rec e4d_runs_after "$r" "$(jget "$out" runs)"
	rec e4d_layout_after "$r" "$(jget "$out" layout_score)"
	rec e4d_fragmented_after "$r" "$(jget "$out" fragmented_files)"
	# e4infofs read-only over the e4defrag image agrees with FIEMAP
	fuse_mount "$d/e/tree" "$d/fe" -o ro
	cat "$d/fe/stats" >"$d/stats-after-e4d.$r.txt" || err "cannot read stats of the e4defrag image"
	n_e4d=$(stat_key "$d/stats-after-e4d.$r.txt" runs)
	[ "$n_e4d" = "$(jget "$out" runs)" ] ||
		err "e4infofs stats over the e4defrag image say runs: $n_e4d, FIEMAP says $(jget "$out" runs)"
	rec e4d_stats_layout_after "$r" "$(stat_key "$d/stats-after-e4d.$r.txt" layout_score)"
	fuse_umount "$d/fe"

	# benefit: cold reads after
	read_all "$d/i/tree" "$dev_i" read_after_e4i "$r"
	read_all "$d/e/tree" "$dev_e" read_after_e4d "$r"
	if [ "$VERIFY" = 1 ]; then
		"${TOOL[@]}" verify-same "$d/i/tree" "$d/e/tree" >/dev/null ||
			err "the trees defragmented by e4infofs and e4defrag differ in content"
	fi
	umount_img "$d/e"
	umount_img "$d/i"
	rm -f "$d/e4d.img" "$d/e4i.img"
}

# bench_compact D: `echo compact` at the root of a fresh copy of a cheese
# image; the free space before and after, from e2freefrag on the unmounted
# image and from the mount's `freespace`, which must agree.
bench_compact() {
	local d=$1 out t0 t st=0
	log "corpus $CUR_C/$CUR_V: compact"
	cp --sparse=always "$d/aged.img" "$d/cmp.img" || die "cp failed"
	sync
	out=$("${TOOL[@]}" freefrag "$d/cmp.img") || err "e2freefrag of the image before compact failed"
	rec_free compact_before "$out"
	mount_img "$d/cmp.img" "$d/c"
	fuse_mount "$d/c" "$d/fc"
	"${TOOL[@]}" freespace "$d/fc/freespace" >"$d/freespace-before.json" || err "cannot read freespace before compact"
	rec_free compact_before_fs "$(cat "$d/freespace-before.json")"
	drop_caches
	t0=$EPOCHREALTIME
	echo compact >"$d/fc/defrag" || st=$?
	sync
	t=$(since "$t0")
	cat "$d/fc/defrag" >"$d/compact-status.txt"
	[ "$st" = 0 ] || err "echo compact > defrag failed (status $st): $(tr '\n' ' ' <"$d/compact-status.txt")"
	rec compact_s 1 "$t"
	for k in room_bytes_moved room_files_moved room_gave_way; do
		rec "compact_$k" 1 "$(stat_key "$d/compact-status.txt" "$k" | head -n 1)"
	done
	"${TOOL[@]}" freespace "$d/fc/freespace" >"$d/freespace-after.json" || err "cannot read freespace after compact"
	rec_free compact_after_fs "$(cat "$d/freespace-after.json")"
	fuse_umount "$d/fc"
	umount_img "$d/c"
	out=$("${TOOL[@]}" freefrag "$d/cmp.img") || err "e2freefrag of the image after compact failed"
	rec_free compact_after "$out"
	rm -f "$d/cmp.img"
}
# rec_free KEY JSON: the free-space figures of benchtool's freefrag/freespace.
rec_free() {
	local k
	for k in max_kib free_kib share_128m extents; do
		rec "${1}_$k" 1 "$(jget "$2" "$k")"
	done
}

bench_scan() {
	local d=$1 r=$2 t0 t out s_e4d s_e4i rss0 hwm m0 m1 m2 b0 b1
	local src=$d/m/tree mnt=$d/fm
	log "corpus $CUR_C/$CUR_V: scan run $r"
	drop_caches
	t0=$EPOCHREALTIME
	out=$(e4defrag -c "$src" 2>&1)
	t=$(since "$t0")
	if [[ $out =~ Fragmentation\ score[[:space:]]+([0-9]+) ]]; then
		s_e4d=${BASH_REMATCH[1]}
	else
		err "no Fragmentation score in e4defrag -c $src"
		s_e4d=-1
	fi
	rec e4d_c_s "$r" "$t"
	rec e4d_score "$r" "$s_e4d"

	drop_caches
	t0=$EPOCHREALTIME
	find "$src" -type f -print0 | xargs -0 -r filefrag >/dev/null || err "filefrag over every file failed"
	rec filefrag_s "$r" "$(since "$t0")"

	fuse_mount "$src" "$mnt"
	rss0=$(awk '/^VmRSS:/ { print $2 }' "/proc/$FPID/status")
	drop_caches
	timed_slurp "$mnt/score" scan_cold_s "$r" || err "reading score failed"
	s_e4i=${SLURP%$'\n'}
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$FPID/status")
	rec e4i_score "$r" "${s_e4i:--1}"
	rec rss_after_mount_kib "$r" "$rss0"
	rec hwm_after_scan_kib "$r" "$hwm"
	[[ $s_e4i =~ ^[0-9]+$ ]] || s_e4i=""
	if [ -z "$s_e4i" ] || [ "$s_e4d" -lt 0 ] || [ $((s_e4i - s_e4d)) -gt 1 ] || [ $((s_e4d - s_e4i)) -gt 1 ]; then
		err "scores differ: e4infofs ${s_e4i:-none}, e4defrag -c $s_e4d"
	fi
	m0=$(awk '$1 == "e4infofs_inspections_total" { print $2 }' "$mnt/metrics")
	timed_slurp "$mnt/score" scan_reread_s "$r" || err "reading score (reread) failed"
	[ "${SLURP%$'\n'}" = "$s_e4i" ] || err "score changed on a re-read with nothing changed: $s_e4i -> ${SLURP%$'\n'}"
	m1=$(awk '$1 == "e4infofs_inspections_total" { print $2 }' "$mnt/metrics")
	rec reread_inspections "$r" "$((m1 - m0))"
	cat "$mnt/stats" >"$d/stats-scan.$r.txt"
	b0=$(stat_key "$d/stats-scan.$r.txt" bytes)
	rec files "$r" "$(stat_key "$d/stats-scan.$r.txt" files)"
	rec layout_before "$r" "$(stat_key "$d/stats-scan.$r.txt" layout_score)"
	rec runs_before "$r" "$(stat_key "$d/stats-scan.$r.txt" runs)"
	# one file changes: a block appended
	head -c 4096 /dev/urandom >>"$src/$CHANGE_FILE" || err "append to $CHANGE_FILE failed"
	timed_slurp "$mnt/score" scan_change_s "$r" || err "reading score (after a change) failed"
	m2=$(awk '$1 == "e4infofs_inspections_total" { print $2 }' "$mnt/metrics")
	rec change_inspections "$r" "$((m2 - m1))"
	b1=$(stat_key "$mnt/stats" bytes)
	if [ "$b1" != $((b0 + 4096)) ]; then
		err "change not visible: stats bytes $b0 before, $b1 after appending 4096 bytes to $CHANGE_FILE"
	fi
	# the kernel's share of that re-read: from caches dropped, the file
	# mapped, the same change again, and FIEMAP of the changed file alone
	# (its first mapping writes the appended block back, as the daemon's did)
	drop_caches
	if out=$("${TOOL[@]}" fiemap-time "$src/$CHANGE_FILE"); then
		rec change_fiemap_sync_s "$r" "$(jget "$out" first_seconds)"
		rec change_fiemap_s "$r" "$(jget "$out" seconds)"
		rec change_fiemap_records "$r" "$(jget "$out" records)"
	else
		err "benchtool fiemap-time $CHANGE_FILE failed"
	fi
	fuse_umount "$mnt"
}

bench_list() {
	local d=$1 r=$2 t0 dir=$d/m/tree/$LIST_DIR mnt=$d/fl n
	n=$(find "$dir" -maxdepth 1 -type f | wc -l)
	rec list_files "$r" "$n"
	drop_caches
	t0=$EPOCHREALTIME
	ls -l "$dir" >/dev/null || err "ls -l $dir failed"
	rec list_raw_cold_s "$r" "$(since "$t0")"
	t0=$EPOCHREALTIME
	ls -l "$dir" >/dev/null
	rec list_raw_warm_s "$r" "$(since "$t0")"
	fuse_mount "$d/m/tree" "$mnt"
	drop_caches
	t0=$EPOCHREALTIME
	ls -l "$mnt/$LIST_DIR" >/dev/null || err "ls -l through the mount failed"
	rec list_mnt_cold_s "$r" "$(since "$t0")"
	t0=$EPOCHREALTIME
	ls -l "$mnt/$LIST_DIR" >/dev/null || err "ls -l through the mount failed"
	rec list_mnt_warm_s "$r" "$(since "$t0")"
	[ "$(ls "$mnt/$LIST_DIR" | wc -l)" -ge "$n" ] || err "the mount lists fewer entries than $n in $LIST_DIR"
	fuse_umount "$mnt"
}

# ---- main -------------------------------------------------------------------
LOAD_START=$(cut -d ' ' -f 1-3 /proc/loadavg)
log "work dir $W, runs $RUNS, defrag runs $DRUNS, scale $SCALE, seed $SEED"
for c in "${CORPORA[@]}"; do
	for v in "${VARIANTS[@]}"; do
		bench_one "$c" "$v"
	done
done
CUR_C="" CUR_V=""
DURATION=$(since "$T_START")
LOAD_END=$(cut -d ' ' -f 1-3 /proc/loadavg)

# ---- report -----------------------------------------------------------------
export M_COMMAND=$INVOKED M_DURATION=$DURATION M_LOAD_START=$LOAD_START M_LOAD_END=$LOAD_END \
	M_RUNS=$RUNS M_DRUNS=$DRUNS M_SCALE=$SCALE M_SEED=$SEED M_SMOKE=$SMOKE \
	M_CORPORA="${CORPORA[*]}" M_VARIANTS="${VARIANTS[*]}"
M_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
M_E2FS=$(e4defrag 2>&1 | sed -n 's/^e4defrag \([^ ]*\).*/\1/p' | head -n 1)
M_E4I=$("$E4INFOFS" -V 2>&1 | head -n 1)
M_COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
M_DIRTY=$(GIT_OPTIONAL_LOCKS=0 git -C "$REPO" status --porcelain -- core fusefs 2>/dev/null | wc -l)
M_NOTES=$(printf '%s\n' "${NOTES[@]}")
export M_DATE M_E2FS M_E4I M_COMMIT M_DIRTY M_NOTES
python3 - "$W/meta.json" <<'PYEOF' || die "cannot write meta.json"
import json, os, sys
e = os.environ
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
            if l.startswith("model name")), "?")
mem = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal:"))
json.dump({
    "command": e["M_COMMAND"], "date": e["M_DATE"],
    "nproc": os.cpu_count(), "cpu": cpu, "mem": "%.1f GiB" % (mem / 1048576),
    "kernel": os.uname().release, "e2fsprogs": e["M_E2FS"], "e4infofs": e["M_E4I"],
    "commit": e["M_COMMIT"], "dirty_files": int(e["M_DIRTY"] or 0),
    "runs": int(e["M_RUNS"]), "defrag_runs": int(e["M_DRUNS"]),
    "scale": float(e["M_SCALE"]), "seed": int(e["M_SEED"]), "smoke": e["M_SMOKE"] == "1",
    "duration_s": float(e["M_DURATION"]),
    "load_start": e["M_LOAD_START"], "load_end": e["M_LOAD_END"],
    "corpora": e["M_CORPORA"].split(), "variants": e["M_VARIANTS"].split(),
    "notes": [n for n in e["M_NOTES"].split("\n") if n],
}, open(sys.argv[1], "w"), indent=1)
PYEOF
mkdir -p "$(dirname "$OUT")"
python3 "$HERE/report.py" "$RES" "$W/meta.json" >"$OUT.tmp" && mv "$OUT.tmp" "$OUT" ||
	{ rm -f "$OUT.tmp"; die "report.py failed"; }
log "wrote $OUT in ${DURATION} s; $ERRORS error(s)"
[ "$ERRORS" = 0 ] || { grep '"m":"error"' "$RES" >&2; exit 1; }
exit 0
