# shellcheck shell=bash
# Helpers of the hardening tests, sourced after tests/lib.sh. They source
# tests/defrag/common.sh too (FSNAP, dkey, wait_state, drop_caches, ...).
#
#   HW ...                       python3 hw.py (see its docstring): writes
#                                and opens that print the errno they got
#   as_uid UID CMD...            CMD as uid and gid UID, no supplementary
#                                groups (setpriv)
#   free_blocks DEV              "Free blocks" of dumpe2fs -h DEV
#   fs_blocks FILE               blocks of FILE, extent tree included
#   rss_kib PID / threads_of PID VmRSS (KiB) / number of threads of PID
#   alive MSG                    cat $MNT/score answers a number within 20 s,
#                                or fail with MSG
#   is_asan                      the daemon is built with AddressSanitizer
#   snap_tree DIR                "path type mode uid size" of every entry under
#                                DIR (to prove nothing in the source changed)
#   trig WORD FILE               echo WORD 1<>FILE (no O_TRUNC). Use it inside
#                                $(...): bash 5.2 loses the fd number of
#                                "1<>" written inside a command substitution
#                                (it redirects fd 0 and echo writes to the
#                                substitution), but not in a function defined
#                                outside it

_HARD_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../defrag/common.sh
source "$_HARD_DIR/../defrag/common.sh"
# shellcheck disable=SC2034 # used by the tests
HW=(python3 "$_HARD_DIR/hw.py")

as_uid() {
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$u" --clear-groups -- "$@"
}

free_blocks() {
	dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Free blocks: *//p'
}

fs_blocks() {
	echo $(($(stat -c %b "$1") * 512 / $(stat -f -c %S "$1")))
}

rss_kib() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

threads_of() {
	awk '/^Threads:/ { print $2 }' "/proc/$1/status"
}

alive() {
	local out
	out=$(timeout 20 cat "$MNT/score" 2>&1) || fail "$1: cat score failed or hung: $out"
	[[ $out =~ ^[0-9]+$ ]] || fail "$1: cat score gave '$out'"
	kill -0 "$DAEMON_PID" 2>/dev/null || fail "$1: the daemon is gone"
}

is_asan() {
	grep -q __asan_init "$E4INFOFS" 2>/dev/null || ldd "$E4INFOFS" 2>/dev/null | grep -q libasan
}

snap_tree() {
	(cd "$1" && find . -path ./lost+found -prune -o -printf '%p %y %m %u %s\n' | sort)
}

trig() {
	echo "$1" 1<>"$2"
}
