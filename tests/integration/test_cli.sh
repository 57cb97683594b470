#!/usr/bin/env bash
# Command line: -V, -h; bad sources fail at start with one line on stderr
# and exit status 1, mounting nothing; a mounted block device and a
# subdirectory work as SOURCE; the mount's type is fuse.e4infofs and its
# source is SOURCE; writes to attribute files fail.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
setup_image 128

mkdir -p "$SRC/sub/deeper"
"$MKFRAG" frag "$SRC/sub" f 3 256 8
"$MKFRAG" frag "$SRC/sub/deeper" g 2 128 4
"$MKFRAG" frag "$SRC" top 2 128 4
sync

# ---- -V, -h ------------------------------------------------------------------
out=$("$E4INFOFS" -V 2>&1) || fail "-V exited with $?"
grep -Eq '[0-9]+\.[0-9]+' <<<"$out" || fail "-V prints no version: $out"
grep -qi 'e4infofs' <<<"$out" || fail "-V does not name e4infofs: $out"
out=$("$E4INFOFS" -h 2>&1) || fail "-h exited with $?"
grep -qi 'usage' <<<"$out" || fail "-h prints no usage: $out"
grep -q 'SOURCE' <<<"$out" || fail "-h does not mention SOURCE: $out"
out=$("$E4INFOFS" --help 2>&1) || fail "--help exited with $?"

# ---- bad sources -------------------------------------------------------------
mkdir -p "$T/tmpfs" "$T/bad-mnt"
mount -t tmpfs -o size=4M tmpfs "$T/tmpfs"
on_cleanup umount -l "$T/tmpfs"
mkdir "$T/tmpfs/dir"
truncate -s 64M "$T/other.img"
mkfs.ext4 -q -F "$T/other.img"
attach_loop "$T/other.img" OTHER_LOOP      # ext4, not mounted

# bad_source WHAT SOURCE: e4infofs SOURCE MNT exits 1, one line on stderr,
# nothing mounted.
bad_source() {
	local what=$1 source=$2 rc=0 err
	err=$(timeout 20 "$E4INFOFS" "$source" "$T/bad-mnt" 2>&1 >/dev/null) || rc=$?
	if findmnt -n --mountpoint "$T/bad-mnt" >/dev/null; then
		_umount_fuse "$T/bad-mnt"
		fail "$what: $source was mounted"
	fi
	check_eq "$rc" 1 "$what: exit status (stderr: $err)"
	[ -n "$err" ] || fail "$what: nothing on stderr"
	check_eq "$(wc -l <<<"$err")" 1 "$what: lines on stderr ($err)"
	log "$what: $err"
}
bad_source "nonexistent" "$T/does-not-exist"
bad_source "regular file" "$SRC/top0"
bad_source "tmpfs directory" "$T/tmpfs/dir"
bad_source "tmpfs root" "$T/tmpfs"
bad_source "unmounted ext4 loop device" "$OTHER_LOOP"
bad_source "character device" /dev/null
bad_source "empty" ""
# Also in the foreground.
rc=0
err=$(timeout 20 "$E4INFOFS" "$T/does-not-exist" "$T/bad-mnt" -f 2>&1 >/dev/null) || rc=$?
check_eq "$rc" 1 "nonexistent source with -f: exit status ($err)"
check_eq "$(wc -l <<<"$err")" 1 "nonexistent source with -f: lines on stderr ($err)"
# Missing arguments, bad mount point: an error, not a mount.
rc=0
"$E4INFOFS" >/dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "no arguments: exit status 0"
rc=0
"$E4INFOFS" "$SRC" >/dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "no mount point: exit status 0"
rc=0
timeout 20 "$E4INFOFS" "$SRC" "$T/no-such-mountpoint" >/dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "nonexistent mount point: exit status 0"
check_eq "$(findmnt -rn -t fuse.e4infofs -o TARGET | grep -cF "$T/" || true)" 0 "e4infofs mounts after the bad starts"

# ---- a directory as SOURCE -----------------------------------------------------
start_e4infofs
check_eq "$(findmnt -n -o FSTYPE --mountpoint "$MNT")" fuse.e4infofs "type of the mount"
check_eq "$(findmnt -n -o SOURCE --mountpoint "$MNT")" "$SRC" "source of the mount"
mount | grep -F " $MNT type fuse.e4infofs " >/dev/null || fail "mount does not show type fuse.e4infofs: $(mount | grep -F "$MNT")"
[ -d "$MNT/sub/f0" ] && [ -f "$MNT/sub/f0/extents" ] && [ -f "$MNT/metrics" ] || fail "mount content"
root_score=$(cat "$MNT/score")
! echo 1 2>/dev/null >"$MNT/score" || fail "echo 1 > score succeeded"
! echo 1 2>/dev/null >"$MNT/sub/f0/score" || fail "echo 1 > sub/f0/score succeeded"
check_eq "$(cat "$MNT/score")" "$root_score" "score after the write attempts"

# ---- a subdirectory as SOURCE ------------------------------------------------------
mount_e4infofs "$SRC/sub" "$T/mnt-sub" -o scan_threads=1
check_eq "$(findmnt -n -o SOURCE,FSTYPE --mountpoint "$T/mnt-sub")" "$SRC/sub fuse.e4infofs" "subdir mount"
[ -d "$T/mnt-sub/f0" ] && [ -d "$T/mnt-sub/deeper/g0" ] && [ -f "$T/mnt-sub/metrics" ] || fail "subdir mount content"
[ ! -e "$T/mnt-sub/top0" ] || fail "subdir mount shows a file of its parent"
check_eq "$(cat "$T/mnt-sub/score")" "$(cat "$MNT/sub/score")" "score of sub/ in both mounts"
check_eq "$(stat_key "$T/mnt-sub/stats" files)" 5 "subdir mount: files"
stop_e4infofs "$T/mnt-sub"

# ---- the mounted block device as SOURCE ----------------------------------------------
mount_e4infofs "$LOOP" "$T/mnt-dev" -o scan_threads=8
check_eq "$(findmnt -n -o SOURCE,FSTYPE --mountpoint "$T/mnt-dev")" "$LOOP fuse.e4infofs" "block device mount"
check_eq "$(cat "$T/mnt-dev/score")" "$root_score" "score of the device mount vs the directory mount"
check_eq "$(stat_key "$T/mnt-dev/stats" files)" "$(stat_key "$MNT/stats" files)" "files of both mounts"
[ -d "$T/mnt-dev/sub/deeper/g1" ] || fail "block device mount content"
[ ! -e "$T/mnt-dev/lost+found" ] || fail "block device mount shows lost+found"
stop_e4infofs "$T/mnt-dev"

# ---- mount.fuse3, as mount -t fuse.e4infofs / fstab run it ----------------------------
# (mount(8) itself runs helpers with a fixed PATH, which has no e4infofs
# here; mount.fuse3 runs "e4infofs SOURCE MOUNTPOINT -o OPTS" like it.)
if command -v mount.fuse3 >/dev/null; then
	mkdir -p "$T/bin" "$T/mnt-helper"
	ln -s "$E4INFOFS" "$T/bin/e4infofs"
	PATH="$T/bin:$PATH" mount.fuse3 "$SRC/sub" "$T/mnt-helper" -t fuse.e4infofs -o scan_threads=2,dev,suid ||
		fail "mount.fuse3 $SRC/sub $T/mnt-helper -t fuse.e4infofs failed"
	check_eq "$(findmnt -n -o SOURCE,FSTYPE --mountpoint "$T/mnt-helper")" "$SRC/sub fuse.e4infofs" "mount.fuse3 mount"
	[[ $(cat "$T/mnt-helper/score") =~ ^[0-9]+$ ]] || fail "score through the mount.fuse3 mount"
	_umount_fuse "$T/mnt-helper"
	findmnt -n --mountpoint "$T/mnt-helper" >/dev/null && fail "could not unmount $T/mnt-helper"
fi

stop_e4infofs
log "ok"
