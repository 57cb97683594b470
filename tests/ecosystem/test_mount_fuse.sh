#!/usr/bin/env bash
# Mounting as fstab and mount(8) do: the daemon accepts the fstab-only
# options (nofail, _netdev, auto, noauto, user, users, defaults, rw, x-*) in the
# foreground and daemonized, and tells a wrong option on stderr;
# `mount.fuse3 "E4INFOFS#SRC" MNT -o
# allow_other,nofail,_netdev` and `mount -t fuse "E4INFOFS#SRC" ...` give
# a fuse.e4infofs mount of SRC; the line of examples/fstab.example (paths
# substituted) mounts with `mount -T FSTAB MNT` as at boot (in a private
# mount namespace where /usr/local/sbin holds e4infofs, since mount.fuse3
# runs it with /bin/sh's default PATH, and /dev/log is a test socket): the
# daemonized daemon logs a finished defrag job to syslog (LOG_DAEMON,
# ident e4infofs); each daemon exits after its unmount, and has its
# fanotify thread (e4watch) also after daemonizing.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
require_cmd mount.fuse3 unshare
HERE=$(cd "$(dirname "$0")" && pwd)
EXAMPLES=$(cd "$HERE/../../examples" && pwd)

setup_image 128
mkdir -p "$SRC/a" "$SRC/b"
"$MKFRAG" frag "$SRC/a" f 3 512 8
"$MKFRAG" frag "$SRC/b" g 2 256 4
sync
OPTS_IGNORED=nofail,_netdev,auto,noauto,user,users,defaults,rw,x-systemd.automount,x-systemd.requires-mounts-for=/home

# The pid of the e4infofs process whose arguments include DIR.
daemon_of() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = e4infofs ] || continue
		{ tr '\0' '\n' <"$p/cmdline"; } 2>/dev/null | grep -qxF "$1" && echo "${p#/proc/}"
	done
	return 0
}

# check_mount WHAT DIR [OPTION]: a fuse.e4infofs mount of $SRC that serves files.
check_mount() {
	local what=$1 dir=$2 opt=${3:-}
	check_eq "$(findmnt -n -o SOURCE,FSTYPE --mountpoint "$dir")" "$SRC fuse.e4infofs" "$what: source and type"
	mount | grep -qF " on $dir type fuse.e4infofs (" || fail "$what: mount(8) does not show type fuse.e4infofs"
	if [ -n "$opt" ]; then
		findmnt -n -o OPTIONS --mountpoint "$dir" | tr ',' '\n' | grep -qx "$opt" ||
			fail "$what: option $opt not in $(findmnt -n -o OPTIONS --mountpoint "$dir")"
	fi
	# (timeout: a daemon that deadlocked after daemonizing must fail the test, not hang it)
	[[ $(timeout 20 cat "$dir/a/score") =~ ^[0-9]+$ ]] || fail "$what: score of a/ (daemon hung or failed)"
	[[ $(timeout 20 cat "$dir/score") =~ ^[0-9]+$ ]] || fail "$what: score of the root"
	[ -d "$dir/a/f0" ] && [ -f "$dir/freespace" ] || fail "$what: content"
}

# check_threads WHAT PID: the daemon has its fanotify thread (e4watch):
# threads started before fuse_daemonize()'s fork are lost in the child.
check_threads() {
	grep -qx e4watch /proc/"$2"/task/*/comm ||
		fail "$1: daemon $2 has no e4watch thread (threads: $(cat /proc/"$2"/task/*/comm | sort | uniq -c | tr -s ' \n' ' '))"
}

# kill_later PID: SIGKILL at exit if it is still an e4infofs (a daemon
# deadlocked after daemonizing would keep the image busy).
kill_later() {
	on_cleanup "[ \"\$(cat /proc/$1/comm 2>/dev/null)\" = e4infofs ] && kill -KILL $1"
}

# unmount_daemonized WHAT DIR PID: unmounts; the daemon must exit within 10 s.
unmount_daemonized() {
	local what=$1 dir=$2 pid=$3 i
	fusermount3 -u "$dir" || fail "$what: fusermount3 -u $dir failed"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	fail "$what: daemon $pid still running 10 s after the unmount"
}

# ---- the daemon accepts the fstab-only options -------------------------------------------
mount_e4infofs "$SRC" "$T/mnt-opts" -o "$OPTS_IGNORED,allow_other"
check_mount "foreground, -o $OPTS_IGNORED,allow_other" "$T/mnt-opts" allow_other
check_threads "foreground" "$LAST_PID"
stop_e4infofs "$T/mnt-opts"

mkdir -p "$T/mnt-bg"
rc=0
err=$(timeout 20 "$E4INFOFS" "$SRC" "$T/mnt-bg" -o "$OPTS_IGNORED" 2>&1) || rc=$?
check_eq "$rc" 0 "daemonized with -o $OPTS_IGNORED: exit status (output: $err)"
check_eq "$err" "" "daemonized: output"
pid=$(daemon_of "$T/mnt-bg")
kill_later "$pid"
[ -n "$pid" ] || fail "daemonized: no e4infofs process for $T/mnt-bg"
check_mount "daemonized" "$T/mnt-bg"
check_threads "daemonized" "$pid"
unmount_daemonized "daemonized" "$T/mnt-bg" "$pid"

# A mistake in the options is told on stderr also when daemonizing (a
# mount from fstab must not fail silently).
mkdir -p "$T/mnt-bad"
rc=0
err=$(timeout 20 "$E4INFOFS" "$SRC" "$T/mnt-bad" -o allow_other,no_such_option 2>&1) || rc=$?
findmnt -n --mountpoint "$T/mnt-bad" >/dev/null && fail "mounted with -o no_such_option"
[ "$rc" != 0 ] || fail "-o no_such_option: exit status 0"
grep -q no_such_option <<<"$err" || fail "-o no_such_option (daemonizing): status $rc but nothing on stderr names the option: '$err'"

# ---- mount.fuse3 "E4INFOFS#SRC" ------------------------------------------------------------------
mkdir -p "$T/mnt-fuse3"
mount.fuse3 "$E4INFOFS#$SRC" "$T/mnt-fuse3" -o allow_other,nofail,_netdev ||
	fail "mount.fuse3 $E4INFOFS#$SRC $T/mnt-fuse3 -o allow_other,nofail,_netdev failed"
pid=$(daemon_of "$T/mnt-fuse3")
kill_later "$pid"
[ -n "$pid" ] || fail "mount.fuse3: no e4infofs process for $T/mnt-fuse3"
check_mount "mount.fuse3" "$T/mnt-fuse3" allow_other
check_threads "mount.fuse3" "$pid"
unmount_daemonized "mount.fuse3" "$T/mnt-fuse3" "$pid"

# ---- mount -t fuse "E4INFOFS#SRC" ------------------------------------------------------------------
mkdir -p "$T/mnt-t"
mount -t fuse "$E4INFOFS#$SRC" "$T/mnt-t" -o allow_other,nofail,_netdev,noauto ||
	fail "mount -t fuse $E4INFOFS#$SRC failed"
pid=$(daemon_of "$T/mnt-t")
kill_later "$pid"
[ -n "$pid" ] || fail "mount -t fuse: no e4infofs process for $T/mnt-t"
check_mount "mount -t fuse" "$T/mnt-t" allow_other
check_threads "mount -t fuse" "$pid"
unmount_daemonized "mount -t fuse" "$T/mnt-t" "$pid"

# ---- examples/fstab.example with mount -T, as at boot ---------------------------------------------
line=$(grep -v '^#' "$EXAMPLES/fstab.example" | grep -v '^[[:space:]]*$')
check_eq "$(wc -l <<<"$line")" 1 "lines of fstab.example"
read -r f_src f_dir f_type f_opts f_dump f_pass <<<"$line"
check_eq "$f_src $f_dir $f_type $f_dump $f_pass" "/home /mnt/e4info fuse.e4infofs 0 0" "fields of fstab.example"
tr ',' '\n' <<<"$f_opts" | grep -qx nofail || fail "fstab.example has no nofail: $f_opts"
mkdir -p "$T/mnt-fstab" "$T/sbin" "$T/dev"
awk -v src="$SRC" -v dir="$T/mnt-fstab" '!/^#/ && NF { $1 = src; $2 = dir } { print }' \
	"$EXAMPLES/fstab.example" >"$T/fstab"
findmnt --tab-file "$T/fstab" -n -o SOURCE,TARGET,FSTYPE,OPTIONS >/dev/null || fail "findmnt cannot parse the fstab"
ln -s "$E4INFOFS" "$T/sbin/e4infofs"
: >"$T/syslog.txt"
export T SRC LOOP HERE f_opts
cat >"$T/ns.sh" <<'NS'
set -euo pipefail
fail() { echo "FAIL [test_mount_fuse] (namespace): $*" >&2; exit 1; }
# e4infofs where /bin/sh's default PATH finds it.
mount --bind "$T/sbin" /usr/local/sbin
# A /dev with the devices needed and a test socket as /dev/log.
mount -t tmpfs -o mode=755 tmpfs "$T/dev"
for d in null zero full random urandom tty fuse "${LOOP#/dev/}"; do
	: >"$T/dev/$d"
	mount --bind "/dev/$d" "$T/dev/$d"
done
mkdir "$T/dev/pts" "$T/dev/shm"
mount --bind /dev/pts "$T/dev/pts"
mount --bind /dev/shm "$T/dev/shm"
ln -s /proc/self/fd "$T/dev/fd"
python3 "$HERE/syslog_sink.py" "$T/dev/log" "$T/syslog.txt" "$T/sink.ready" &
sink=$!
pid=""
# On any exit: no daemon may outlive the namespace (it would keep the image busy).
trap 'set +e; kill $sink 2>/dev/null; umount -l "$T/mnt-fstab" 2>/dev/null; [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null' EXIT
for _ in $(seq 50); do [ -e "$T/sink.ready" ] && break; sleep 0.1; done
[ -e "$T/sink.ready" ] || fail "syslog sink did not start"
mount --rbind "$T/dev" /dev
mount -T "$T/fstab" "$T/mnt-fstab" || fail "mount -T $T/fstab $T/mnt-fstab failed"
for p in /proc/[0-9]*; do
	[ "$(cat "$p/comm" 2>/dev/null)" = e4infofs ] || continue
	{ tr '\0' '\n' <"$p/cmdline"; } 2>/dev/null | grep -qxF "$T/mnt-fstab" && pid=${p#/proc/}
done
[ -n "$pid" ] || fail "no e4infofs process for $T/mnt-fstab"
check() { [ "$2" = "$3" ] || fail "$1: expected '$3', got '$2'"; }
check "source and type" "$(findmnt -n -o SOURCE,FSTYPE --mountpoint "$T/mnt-fstab")" "$SRC fuse.e4infofs"
for o in $(tr ',' ' ' <<<"$f_opts"); do
	case $o in nofail | _netdev | noauto | auto | defaults) continue ;; esac
	findmnt -n -o OPTIONS --mountpoint "$T/mnt-fstab" | tr ',' '\n' | grep -qx "$o" ||
		fail "option $o of fstab.example is not on the mount"
done
[[ $(timeout 20 cat "$T/mnt-fstab/score") =~ ^[0-9]+$ ]] || fail "score through the fstab mount (daemon hung or failed)"
grep -qx e4watch /proc/"$pid"/task/*/comm || fail "daemon $pid has no e4watch thread (lost in fuse_daemonize's fork?)"
timeout 60 sh -c 'echo 1 >"$1/a/defrag"' sh "$T/mnt-fstab" || fail "defrag through the fstab mount failed"
for _ in $(seq 50); do grep -q 'defrag of inode' "$T/syslog.txt" && break; sleep 0.1; done
umount "$T/mnt-fstab" || fusermount3 -u "$T/mnt-fstab" || fail "cannot unmount $T/mnt-fstab"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "daemon $pid of the fstab mount still running 10 s after umount"
echo "$pid" >"$T/fstab.pid"
pid="" # (gone: nothing to kill at exit)
NS
unshare -m --propagation private bash "$T/ns.sh" || fail "the fstab mount in a private namespace failed (above)"
pid=$(cat "$T/fstab.pid")
log "syslog: $(cat "$T/syslog.txt")"
# <30>: LOG_DAEMON | LOG_INFO; "e4infofs[PID]:" from openlog("e4infofs", LOG_PID, ...).
grep -q "^<30>.* e4infofs\[$pid\]: .*defrag of inode [0-9]*: done" "$T/syslog.txt" ||
	fail "no syslog message of daemon $pid (LOG_DAEMON|LOG_INFO, ident e4infofs) for the finished defrag job: $(cat "$T/syslog.txt")"
log "ok"
