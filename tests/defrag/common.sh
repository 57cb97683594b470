# Helpers of the defrag tests, sourced after tests/lib.sh.
#
#   FSNAP ...                    python3 fsnap.py (snap ROOT | holes F | sha F)
#   drop_caches                  sync and drop the page cache
#   now_s                        seconds since the epoch, with microseconds
#   elapsed_ms START             milliseconds since START (a now_s value)
#   dkey FILE KEY                value of "KEY: value" in a defrag status
#   wait_state DEFRAG STATE SECS until the status shows "state: STATE", or fail
#   wait_not_running DEFRAG SECS until the status no longer shows running
#   runs_list ROOT               "path runs" for every regular file under ROOT
#                                (filefrag's count; ROOT's lost+found skipped)
#   sum_runs ROOT                the sum of runs_list
#   unique_files ROOT            number of distinct regular inodes under ROOT
#   mount_image IMG DIR [OPTS]   attach IMG to a loop device and mount it on
#                                DIR (with -o OPTS); undone at cleanup
#   forget_daemon PID            after a daemon was killed on purpose: reap it
#                                and drop it from lib.sh's list, so cleanup
#                                does not report its exit status
#   snap_before                  sync, then $T/snap.before (fsnap) and
#                                $T/runs.before (runs_list) of $SRC
#   check_snap WHAT              drop caches and fail unless $SRC's fsnap
#                                still equals $T/snap.before
#   check_moved_intact FREE      after a job that moved other files too:
#                                none has more runs than in
#                                $T/runs.before, check_snap, free blocks
#                                ($(stat -f -c %f)) within 16 of FREE,
#                                e2fsck clean (SRC unmounted meanwhile)
#   build_mixed_tree DIR         a deterministic fragmented tree of ~280 files
#                                (4 KiB .. 6 MiB, sparse, prealloc, empty,
#                                one-block, a hard link pair), ~70 MiB

_DEFRAG_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # used by the tests
FSNAP=(python3 "$_DEFRAG_DIR/fsnap.py")

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

now_s() { echo "$EPOCHREALTIME"; }

elapsed_ms() {
	local a=${1/./} b=${EPOCHREALTIME/./}
	echo $(((10#$b - 10#$a) / 1000))
}

dkey() {
	sed -n "s/^$2: //p" "$1"
}

# wait_moving DEFRAG: until a running job reports bytes_done > 0.
wait_moving() {
	local i b
	for ((i = 0; i < 400; i++)); do
		b=$(dkey "$1" bytes_done 2>/dev/null) || true
		[ "${b:-0}" -gt 0 ] && return 0
		[ "$(dkey "$1" state 2>/dev/null)" = running ] || break
		sleep 0.025
	done
	fail "$1: no progress seen ($(tr '\n' ' ' <"$1"))"
}

wait_state() {
	local f=$1 want=$2 secs=$3 i st=""
	for ((i = 0; i < secs * 20; i++)); do
		st=$(dkey "$f" state 2>/dev/null) || true
		[ "$st" = "$want" ] && return 0
		sleep 0.05
	done
	fail "$f: state '$want' not reached within $secs s (last: '$st')"
}

wait_not_running() {
	local f=$1 secs=$2 i
	for ((i = 0; i < secs * 20; i++)); do
		[ "$(dkey "$f" state 2>/dev/null)" != running ] && return 0
		sleep 0.05
	done
	fail "$f: still running after $secs s"
}

runs_list() {
	local root=$1
	find "$root" -xdev -path "$root/lost+found" -prune -o -type f -print0 |
		xargs -0 -r filefrag |
		sed -n 's/^\(.*\): \([0-9][0-9]*\) extents\{0,1\} found$/\1 \2/p' |
		sed "s|^$root/||" | sort
}

sum_runs() {
	runs_list "$1" | awk '{ s += $NF } END { print s + 0 }'
}

unique_files() {
	local root=$1
	find "$root" -xdev -path "$root/lost+found" -prune -o -type f -printf '%i\n' | sort -u | wc -l
}

mount_image() {
	local img=$1 dir=$2 opts=${3:-}
	attach_loop "$img" _MI_DEV
	mkdir -p "$dir"
	mount ${opts:+-o "$opts"} "$_MI_DEV" "$dir" || fail "mount $img on $dir ${opts:+(-o $opts)} failed"
	on_cleanup "umount '$dir' || umount -l '$dir'"
}

# A second copy of the test image ($IMG, mounted at $SRC), taken while A is
# unmounted, mounted at DIR; A is mounted again.
mount_copy_b() {
	local dir=$1
	umount "$SRC"
	cp --sparse=always "$IMG" "$T/b.img"
	mount "$LOOP" "$SRC" || fail "cannot mount A again"
	mount_image "$T/b.img" "$dir"
}

forget_daemon() {
	local pid=$1 i
	wait "$pid" 2>/dev/null || true
	for i in "${!_DAEMON_PIDS[@]}"; do
		[ "${_DAEMON_PIDS[$i]}" = "$pid" ] && _DAEMON_PIDS[i]=""
	done
	return 0
}

snap_before() {
	sync
	"${FSNAP[@]}" snap "$SRC" >"$T/snap.before"
	runs_list "$SRC" >"$T/runs.before"
}

check_snap() {
	drop_caches
	"${FSNAP[@]}" snap "$SRC" >"$T/snap.now"
	cmp -s "$T/snap.before" "$T/snap.now" ||
		fail "$1 changed content, timestamps or holes: $(diff "$T/snap.before" "$T/snap.now" | head -6 | tr "\n" " ")"
}

check_moved_intact() {
	local free_before=$1 free_now
	runs_list "$SRC" >"$T/runs.now"
	join "$T/runs.before" "$T/runs.now" | awk '$3 > $2 { print; bad = 1 } END { exit bad }' ||
		fail "files got more runs"
	check_snap "the job"
	sync
	free_now=$(stat -f -c %f "$SRC")
	within "$free_now" "$free_before" 16 || fail "free blocks $free_before -> $free_now"
	umount "$SRC"
	e2fsck -fn "$LOOP" >"$T/fsck.log" 2>&1 || fail "e2fsck: $(tail -5 "$T/fsck.log")"
	mount "$LOOP" "$SRC"
}

build_mixed_tree() {
	local d=$1 i
	mkdir -p "$d/small/sub" "$d/medium" "$d/big/deep/er" "$d/odd" "$d/links"
	"$MKFRAG" frag "$d/small" s 120 16 4          # 4 runs each
	"$MKFRAG" frag "$d/small/sub" t 80 40 4       # 10 runs each
	"$MKFRAG" frag "$d/medium" m 40 520 8         # ~65 runs each
	"$MKFRAG" frag "$d/big/deep/er" b 6 6144 32   # 192 runs each
	"$MKFRAG" frag "$d/big" c 3 3000 64           # odd size
	"$MKFRAG" frag "$d/odd" one 10 4 4            # one block each
	"$MKFRAG" frag "$d/odd" contig 1 2048 2048    # already contiguous
	"$MKFRAG" sparse "$d/odd/sparse" 4096
	"$MKFRAG" sparse "$d/odd/sparse-tail" 300     # ends in a hole
	"$MKFRAG" prealloc "$d/odd/prealloc" 2048
	"$MKFRAG" prealloc "$d/odd/prealloc-small" 64
	"$MKFRAG" frag "$d/links" h 2 256 4
	ln "$d/links/h0" "$d/links/h0-link"
	for i in 0 1 2 3 4; do : >"$d/odd/empty$i"; done
	printf x >"$d/odd/one-byte"
	truncate -s 1M "$d/odd/hole-only"
	sync
}

