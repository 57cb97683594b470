# Helpers sourced by every integration test (bash). A test passes with exit
# status 0, fails with any other, and is skipped with 77.
#
#   require_root                 skip (77) unless root; fail instead when
#                                E4INFO_REQUIRE_PRIVILEGED=1
#   setup_image SIZE_MIB [mkfs options...]
#                                temp dir $T, ext4 image $IMG on loop device
#                                $LOOP, mounted on $SRC; cleaned up at exit
#   mount_e4infofs_as UID SOURCE DIR [args...]
#                                mount_e4infofs with the daemon run as
#                                UID:UID without supplementary groups
#                                (setpriv); makes DIR UID's and /dev/fuse
#                                usable by UID (see allow_user_fuse)
#   allow_user_fuse              /dev/fuse 0666 until exit, as desktops
#                                have it (libfuse opens it before it falls
#                                back to fusermount3)
#   as_uid UID CMD...            CMD as UID:UID, no supplementary groups
#   desktop_user UID             a desktop session's environment for UID
#                                under $T/desktop (home, cache, runtime
#                                dir, keyfile settings), for as_desktop
#   as_desktop CMD...            CMD as that user in that environment
#                                only (env -i: nothing of root's); every
#                                process of that environment (found by its
#                                HOME) is ended at exit
#   desktop_cmd CMD...           the same command as an array,
#                                DESKTOP_CMD (setsid "${DESKTOP_CMD[@]}")
#   start_e4infofs [args...]     e4infofs $SRC $T/mnt -f [args] in the
#                                background; sets MNT and DAEMON_PID
#   mount_e4infofs SOURCE DIR [args...]
#                                the same for any source and mount point;
#                                sets LAST_PID (call it in the main shell,
#                                not in $(...), so the exit status of the
#                                daemon can be collected). The daemon runs
#                                as "${E4INFOFS_WRAP[@]}" "$E4INFOFS" ...:
#                                a test sets the array for one call (e.g.
#                                E4INFOFS_WRAP=(setpriv --reuid 65534 ...
#                                --) to run the daemon as another user),
#                                empty by default; the wrapper must exec
#                                the daemon (same pid)
#   stop_e4infofs [DIR]          unmount (default $MNT), wait for the daemon,
#                                fail if it did not exit cleanly
#   on_cleanup WORDS...          eval "WORDS..." at exit (in reverse order),
#                                after the FUSE mounts and before the image
#                                go away
#   attach_loop FILE VAR         losetup FILE, device name into VAR; detached
#                                at exit
#   fail MSG / check_eq ACTUAL EXPECTED MSG / check MSG CMD...
#   filefrag_count FILE          filefrag's "N extents found"
#   filefrag_records FILE        "logical physical length" per record of
#                                filefrag -v
#   e4defrag_score DIR           "Fragmentation score" of e4defrag -c DIR
#   metric NAME                  value of a counter in $MNT/metrics
#   stat_key FILE KEY            value of "KEY: value" in a stats file
#   e4_records EXTENTS_FILE      "logical physical length" per record
#   within A B TOL               |A - B| <= TOL
#
# The environment gives E4INFOFS, MKFRAG and E4_UMOUNT (absolute paths);
# run by hand from a checkout they default to build/fusefs/e4infofs,
# build/tests/tools/mkfrag and build/fusefs/umount.fuse.e4infofs.

_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_REPO_DIR=$(cd "$_LIB_DIR/.." && pwd)
: "${E4INFOFS:=$_REPO_DIR/build/fusefs/e4infofs}"
: "${MKFRAG:=$_REPO_DIR/build/tests/tools/mkfrag}"
: "${E4_UMOUNT:=$_REPO_DIR/build/fusefs/umount.fuse.e4infofs}"
export E4INFOFS MKFRAG E4_UMOUNT
export LC_ALL=C

TEST_NAME=$(basename "$0" .sh)
T=""
SRC=""
IMG=""
LOOP=""
MNT=""
DAEMON_PID=""
LAST_PID=""
_CLEANUP_CMDS=()   # extra cleanup commands, run in reverse order
_DAEMON_PIDS=()    # daemons started by mount_e4infofs
_DAEMON_LOGS=()    # their logs
_EXTRA_LOOPS=()    # loop devices attached by attach_loop
_CLEANED=0
E4INFOFS_WRAP=()   # command words put before "$E4INFOFS" by mount_e4infofs

log() { echo "[$TEST_NAME] $*" >&2; }

_TAIL_SHOWN=0
# Prints the end of every daemon log, or a sanitizer report from its start.
_daemon_log_tail() {
	local f
	[ "$_TAIL_SHOWN" = 1 ] && return 0
	_TAIL_SHOWN=1
	for f in "${_DAEMON_LOGS[@]}"; do
		[ -s "$f" ] || continue
		if _log_has_sanitizer_report "$f"; then
			echo "----- sanitizer report in $f -----" >&2
			grep -m 1 -A 40 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$f" >&2
		else
			echo "----- last lines of $f -----" >&2
			tail -n 30 "$f" >&2
		fi
	done
}

fail() {
	echo "FAIL [$TEST_NAME]: $*" >&2
	_daemon_log_tail
	exit 1
}

check_eq() {
	local actual=$1 expected=$2 msg=${3:-value}
	if [ "$actual" != "$expected" ]; then
		fail "$msg: expected '$expected', got '$actual'"
	fi
}

# check MSG CMD...: fails with MSG unless CMD succeeds.
check() {
	local msg=$1
	shift
	"$@" || fail "$msg (command: $*)"
}

require_root() {
	local why=""
	if [ "$(id -u)" -ne 0 ]; then
		why="needs root"
	elif [ ! -c /dev/fuse ]; then
		why="needs /dev/fuse"
	elif ! losetup -f >/dev/null 2>&1; then
		why="needs a free loop device"
	elif ! grep -qw ext4 /proc/filesystems; then
		why="needs ext4 in the kernel"
	fi
	[ -z "$why" ] && return 0
	if [ "${E4INFO_REQUIRE_PRIVILEGED:-0}" = 1 ]; then
		echo "FAIL [$TEST_NAME]: $why, and E4INFO_REQUIRE_PRIVILEGED=1 makes privileged tests mandatory" >&2
		exit 1
	fi
	echo "SKIP [$TEST_NAME]: $why" >&2
	exit 77
}

require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || fail "needs the command '$c'"
	done
}

_check_tools() {
	[ -x "$E4INFOFS" ] || fail "E4INFOFS=$E4INFOFS is not an executable (build first)"
	[ -x "$MKFRAG" ] || fail "MKFRAG=$MKFRAG is not an executable (build first)"
	require_cmd mkfs.ext4 losetup findmnt filefrag e4defrag fusermount3 jq python3
}

# on_cleanup WORDS...: evals "WORDS..." (joined with spaces) at exit, so
# quote paths that may hold spaces inside the words: on_cleanup "umount '$d'".
on_cleanup() {
	_CLEANUP_CMDS+=("$*")
}

# Is anything mounted on DIR (also a dead FUSE mount)?
_is_mounted() {
	findmnt -n --mountpoint "$1" >/dev/null 2>&1
}

# Unmounts the FUSE mount on DIR in the waiting form: umount.fuse.e4infofs
# ($E4_UMOUNT, what umount(8) runs) returns once the daemon has exited
# and let go of SOURCE; fusermount3 -u (the fallback) does not wait.
_umount_fuse() {
	local dir=$1 i
	for i in 1 2 3; do
		_is_mounted "$dir" || return 0
		{ [ -x "${E4_UMOUNT:-}" ] && E4INFOFS_UMOUNT_TIMEOUT=10 timeout 15 "$E4_UMOUNT" "$dir" 2>/dev/null; } ||
			timeout 10 fusermount3 -u "$dir" 2>/dev/null ||
			timeout 10 umount "$dir" 2>/dev/null || true
		_is_mounted "$dir" || return 0
		sleep 0.5
	done
	umount -l "$dir" 2>/dev/null || true
}

# Waits up to $2 seconds for pid $1 (a child of this shell: do not call
# in a subshell) to exit; kills it after that. Sets REAP_STATUS to its exit
# status, or "killed".
REAP_STATUS=""
_reap() {
	local pid=$1 secs=${2:-10} i rc=0
	for ((i = 0; i < secs * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		sleep 1
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		REAP_STATUS=killed
		return 0
	fi
	wait "$pid" 2>/dev/null || rc=$?
	REAP_STATUS=$rc
}

# Sanitizer reports in a daemon log.
_log_has_sanitizer_report() {
	[ -f "$1" ] && grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$1"
}

_cleanup() {
	local rc=$? i pid problems=""
	[ "$_CLEANED" = 1 ] && return 0
	_CLEANED=1
	set +e
	trap - INT TERM
	cd / # a cwd inside a mount would keep it busy
	# A desktop's programs (file manager, thumbnailers) hold the mount.
	[ -n "$DESKTOP_HOME" ] && _end_desktop "$DESKTOP_HOME"
	# FUSE mounts under $T (also those the test did not expect).
	if [ -n "$T" ]; then
		while read -r dir; do
			[ -n "$dir" ] && _umount_fuse "$dir"
		done < <(findmnt -rn -o TARGET 2>/dev/null | grep -F "$T/" | grep -vxF "$T/src" | sort -r)
		[ -n "$MNT" ] && _umount_fuse "$MNT"
	fi
	for i in "${!_DAEMON_PIDS[@]}"; do
		pid=${_DAEMON_PIDS[$i]}
		[ -n "$pid" ] || continue
		_reap "$pid" 10
		if [ "$REAP_STATUS" != 0 ]; then
			problems+="daemon $pid exited with status $REAP_STATUS at unmount; "
		fi
		if _log_has_sanitizer_report "${_DAEMON_LOGS[$i]}"; then
			problems+="sanitizer report in ${_DAEMON_LOGS[$i]}; "
		fi
	done
	for ((i = ${#_CLEANUP_CMDS[@]} - 1; i >= 0; i--)); do
		eval "${_CLEANUP_CMDS[$i]}" >/dev/null 2>&1
	done
	_CLEANUP_CMDS=()
	# Swap files left active under $T would keep the filesystem alive.
	if [ -n "$T" ]; then
		awk 'NR > 1 { print $1 }' /proc/swaps 2>/dev/null | grep -F "$T/" |
			while read -r sw; do swapoff "$sw" 2>/dev/null; done
	fi
	if [ -n "$SRC" ] && _is_mounted "$SRC"; then
		umount "$SRC" 2>/dev/null || { sleep 1; umount "$SRC" 2>/dev/null; } ||
			umount -l "$SRC" 2>/dev/null
	fi
	local dev
	for dev in "$LOOP" "${_EXTRA_LOOPS[@]}"; do
		[ -n "$dev" ] && losetup -d "$dev" 2>/dev/null
	done
	LOOP=""
	_EXTRA_LOOPS=()
	if [ -n "$T" ] && [ -d "$T" ]; then
		if findmnt -rn -o TARGET | grep -qF "$T"; then
			problems+="still mounted under $T, not removed; "
		else
			if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
				_daemon_log_tail
			fi
			rm -rf --one-file-system "$T"
		fi
	fi
	if [ -n "$IMG" ] && losetup -j "$IMG" 2>/dev/null | grep -q .; then
		problems+="loop device still attached to $IMG; "
	fi
	if [ -n "$problems" ]; then
		echo "FAIL [$TEST_NAME] (cleanup): $problems" >&2
		[ "$rc" -eq 0 ] && rc=1
	fi
	exit "$rc"
}

_install_traps() {
	trap _cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# Creates $T (0755, so other users can reach mounts under it).
make_tmpdir() {
	[ -n "$T" ] && return 0
	T=$(mktemp -d "${TMPDIR:-/tmp}/e4infofs-$TEST_NAME.XXXXXX")
	chmod 755 "$T"
	export T
	_install_traps
}

# attach_loop FILE VAR: attaches FILE to a loop device, puts its name into
# VAR (not via $(...): the device must be remembered for cleanup).
attach_loop() {
	local file=$1 var=$2 dev
	dev=$(losetup -f --show "$file") || fail "losetup $file failed"
	_EXTRA_LOOPS+=("$dev")
	printf -v "$var" '%s' "$dev"
}

setup_image() {
	local size=$1
	shift
	_check_tools
	make_tmpdir
	IMG=$T/ext4.img
	SRC=$T/src
	mkdir -p "$SRC" "$T/mnt"
	truncate -s "${size}M" "$IMG"
	mkfs.ext4 -q -F "$@" "$IMG" || fail "mkfs.ext4 $* failed"
	LOOP=$(losetup -f --show "$IMG") || fail "losetup failed"
	mount "$LOOP" "$SRC" || fail "mount $LOOP failed"
	export SRC IMG LOOP T
}

# mount_e4infofs SOURCE DIR [args...]
mount_e4infofs() {
	local source=$1 dir=$2 i logf st=0
	shift 2
	mkdir -p "$dir"
	logf=$T/daemon.log
	[ ${#_DAEMON_LOGS[@]} -gt 0 ] && logf=$T/daemon.${#_DAEMON_LOGS[@]}.log
	# Resume state of a root daemon in the test's directory, not /var/lib.
	local state=()
	[ ${#E4INFOFS_WRAP[@]} -eq 0 ] && state=(-o "state_dir=$T/state")
	"${E4INFOFS_WRAP[@]}" "$E4INFOFS" "$source" "$dir" -f "${state[@]}" "$@" >"$logf" 2>&1 &
	LAST_PID=$!
	_DAEMON_PIDS+=("$LAST_PID")
	_DAEMON_LOGS+=("$logf")
	for ((i = 0; i < 100; i++)); do
		if findmnt -n -t fuse.e4infofs "$dir" >/dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "$LAST_PID" 2>/dev/null; then
			wait "$LAST_PID" || st=$?
			_DAEMON_PIDS[-1]=""
			fail "e4infofs $source $dir -f $* exited with status $st before mounting"
		fi
		sleep 0.1
	done
	fail "e4infofs $source $dir -f $* did not mount within 10 s"
}

as_uid() {
	local uid=$1
	shift
	setpriv --reuid="$uid" --regid="$uid" --clear-groups -- "$@"
}

DESKTOP_UID=""
DESKTOP_HOME=""    # its processes are ended at exit, before the unmounts
DESKTOP_ENV=()
desktop_user() {
	DESKTOP_UID=$1
	local d=$T/desktop
	mkdir -p "$d/home/.cache" "$d/home/.config/glib-2.0/settings" "$d/run"
	chown -R "$DESKTOP_UID:$DESKTOP_UID" "$d"
	chmod 700 "$d/run"
	# GSETTINGS_BACKEND=keyfile: settings are read from (and written to)
	# the home's keyfile, so a test can set them beforehand and nothing
	# reaches a dconf database outside $T.
	DESKTOP_ENV=(env -i "HOME=$d/home" "XDG_CACHE_HOME=$d/home/.cache"
		"XDG_CONFIG_HOME=$d/home/.config" "XDG_RUNTIME_DIR=$d/run"
		GSETTINGS_BACKEND=keyfile PATH=/usr/bin:/bin LANG=C.UTF-8 NO_AT_BRIDGE=1)
	DESKTOP_HOME=$d/home
}

# Pids of the processes whose environment has HOME=$1: those a test
# started with as_desktop, and what they started (D-Bus services,
# thumbnailers), even outside their process group.
_desktop_pids() {
	local e p
	for e in /proc/[0-9]*/environ; do
		p=${e#/proc/}
		p=${p%/environ}
		[ "$p" = $$ ] && continue
		{ tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qxF "HOME=$1" && echo "$p"
	done
	return 0
}

_end_desktop() {
	local pids i
	pids=$(_desktop_pids "$1")
	[ -n "$pids" ] || return 0
	kill -TERM $pids 2>/dev/null
	for ((i = 0; i < 30; i++)); do
		pids=$(_desktop_pids "$1")
		[ -n "$pids" ] || return 0
		sleep 0.1
	done
	kill -KILL $pids 2>/dev/null
	sleep 0.2
}

as_desktop() {
	desktop_cmd "$@"
	"${DESKTOP_CMD[@]}"
}

# desktop_cmd CMD...: DESKTOP_CMD is what as_desktop runs (for setsid).
DESKTOP_CMD=()
desktop_cmd() {
	DESKTOP_CMD=(setpriv --reuid="$DESKTOP_UID" --regid="$DESKTOP_UID" --clear-groups --
		"${DESKTOP_ENV[@]}" "$@")
}

allow_user_fuse() {
	local mode
	mode=$(stat -c %a /dev/fuse)
	[ "$mode" = 666 ] && return 0
	chmod 666 /dev/fuse
	on_cleanup "chmod $mode /dev/fuse"
}

mount_e4infofs_as() {
	local uid=$1 dir=$3
	shift
	allow_user_fuse
	mkdir -p "$dir"
	chown "$uid:$uid" "$dir"
	E4INFOFS_WRAP=(setpriv --reuid="$uid" --regid="$uid" --clear-groups --)
	mount_e4infofs "$@"
	E4INFOFS_WRAP=()
}

start_e4infofs() {
	MNT=$T/mnt
	mount_e4infofs "$SRC" "$MNT" "$@"
	DAEMON_PID=$LAST_PID
	export MNT DAEMON_PID
}

# stop_e4infofs [DIR]: unmounts and checks that the daemon exits with 0.
stop_e4infofs() {
	local dir=${1:-$MNT} i pid
	_umount_fuse "$dir"
	_is_mounted "$dir" && fail "could not unmount $dir"
	for i in "${!_DAEMON_PIDS[@]}"; do
		pid=${_DAEMON_PIDS[$i]}
		[ -n "$pid" ] || continue
		# The daemon of this mount point: its command line names dir.
		if { tr '\0' '\n' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qxF "$dir" ||
			! kill -0 "$pid" 2>/dev/null; then
			_reap "$pid" 10
			_DAEMON_PIDS[$i]=""
			[ "$REAP_STATUS" = 0 ] || fail "daemon $pid of $dir exited with status $REAP_STATUS after unmount"
			_log_has_sanitizer_report "${_DAEMON_LOGS[$i]}" &&
				fail "sanitizer report in ${_DAEMON_LOGS[$i]}"
		fi
	done
	return 0
}

# ---- oracles -------------------------------------------------------------

filefrag_count() {
	local out
	out=$(filefrag "$1" | tail -n 1) || fail "filefrag $1 failed"
	[[ $out =~ :\ ([0-9]+)\ extents?\ found$ ]] || fail "unexpected filefrag output: $out"
	echo "${BASH_REMATCH[1]}"
}

# One "logical physical length" line per FIEMAP record, from filefrag -v.
filefrag_records() {
	filefrag -v "$1" | awk -F: '
		/^ *[0-9]+: / {
			split($2, l, /\.\./); split($3, p, /\.\./)
			gsub(/ /, "", l[1]); gsub(/ /, "", p[1]); gsub(/ /, "", $4)
			print l[1], p[1], $4
		}'
}

# "logical physical length" per record of an e4infofs file extents file.
e4_records() {
	awk '!/^#/ && !/^runs:/ { print $2, $3, $4 }' "$1"
}

e4defrag_score() {
	local out
	out=$(e4defrag -c "$1" 2>&1) || true
	[[ $out =~ Fragmentation\ score[[:space:]]+([0-9]+) ]] ||
		fail "no Fragmentation score in e4defrag -c $1: $out"
	echo "${BASH_REMATCH[1]}"
}

metric() {
	local v
	v=$(awk -v n="$1" '$1 == n { print $2 }' "$MNT/metrics") || fail "cannot read $MNT/metrics"
	[ -n "$v" ] || fail "no metric $1 in $MNT/metrics"
	echo "$v"
}

stat_key() {
	local v
	v=$(sed -n "s/^$2: //p" "$1") || fail "cannot read $1"
	echo "$v"
}

# within A B TOL: |A - B| <= TOL (integers).
within() {
	local d=$(($1 - $2))
	[ "${d#-}" -le "$3" ]
}
