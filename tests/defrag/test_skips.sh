#!/usr/bin/env bash
# Every skip reason on a real case, through a file node's defrag: the write
# succeeds, the status shows "skipped: 1" and "skipped_REASON: 1", and the
# file is unchanged (checksum, filefrag records). Junk trigger words fail
# with EINVAL and move nothing; "0" when idle succeeds; a read-only source
# answers EROFS.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
require_cmd chattr flock mkswap swapon swapoff setsid
setup_image 256

mkdir -p "$SRC/s" "$SRC/x"
"$MKFRAG" frag "$SRC/s" f 10 1024 16   # 64 runs each
"$MKFRAG" frag "$SRC/x" e 2 64 4       # 16 runs each
sync
start_e4infofs

# expect_skip MNTROOT SRCROOT REL REASON: a single-file job on REL ends as
# skipped for REASON, and the file is unchanged.
expect_skip() {
	local mnt=$1 src=$2 rel=$3 reason=$4 sha runs recs out k
	sha=$("${FSNAP[@]}" sha "$src/$rel")
	runs=$(filefrag_count "$src/$rel")
	recs=$(filefrag_records "$src/$rel")
	out=$( { echo 1 >"$mnt/$rel/defrag"; } 2>&1) ||
		fail "$reason: echo 1 > $rel/defrag failed: $out (a skip is a success)"
	out=$(cat "$mnt/$rel/defrag")
	log "$reason: $(tr '\n' ' ' <<<"$out")"
	check_eq "$(dkey "$mnt/$rel/defrag" state)" "done" "$reason: state"
	for k in files skipped "skipped_$reason"; do
		check_eq "$(dkey "$mnt/$rel/defrag" "$k")" 1 "$reason: $k"
	done
	for k in improved optimal no-gain failed cancelled bytes_moved; do
		check_eq "$(dkey "$mnt/$rel/defrag" "$k")" 0 "$reason: $k"
	done
	check_eq "$(grep -c '^skipped_' <<<"$out")" 1 "$reason: number of skipped_ lines"
	check_eq "$("${FSNAP[@]}" sha "$src/$rel")" "$sha" "$reason: checksum of $rel"
	check_eq "$(filefrag_count "$src/$rel")" "$runs" "$reason: runs of $rel"
	check_eq "$(filefrag_records "$src/$rel")" "$recs" "$reason: extent records of $rel"
}

# ---- junk trigger words: EINVAL, nothing done ----------------------------
f=s/f7
sha7=$("${FSNAP[@]}" sha "$SRC/$f")
recs7=$(filefrag_records "$SRC/$f")
check_eq "$(dkey "$MNT/$f/defrag" state)" idle "state before any job"
for junk in "echo foo" "printf 2" "printf '1 '" "printf 11" "echo START" "echo"; do
	if out=$( { eval "$junk" >"$MNT/$f/defrag"; } 2>&1); then
		fail "'$junk > defrag' succeeded, expected EINVAL"
	fi
	[[ $out == *"Invalid argument"* ]] || fail "'$junk > defrag': expected 'Invalid argument', got: $out"
done
# Single writes (bash's stdout is line-buffered: printf '1\n\n' would be
# two writes, "1\n" and a lone newline, which the spec accepts).
out=$(python3 -c '
import errno, os, sys
for junk in (b"1" * 5000, b"1\n\n", b"\n1", b" 1", b"1\0", b"cancel\r\n", b""):
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, junk)
        print("%r: written" % junk[:8] if junk else "empty: ok")
    except OSError as e:
        print("%r: %s" % (junk[:8], errno.errorcode[e.errno]))
    os.close(fd)
' "$MNT/$f/defrag")
want="b'11111111': EINVAL
b'1\n\n': EINVAL
b'\n1': EINVAL
b' 1': EINVAL
b'1\x00': EINVAL
b'cancel\r\n': EINVAL
empty: ok"
check_eq "$out" "$want" "single junk writes to defrag"
check_eq "$(dkey "$MNT/$f/defrag" state)" idle "state after junk writes"
echo 0 >"$MNT/$f/defrag" || fail "echo 0 > defrag when idle failed"
echo cancel >"$MNT/$f/defrag" || fail "echo cancel > defrag when idle failed"
echo 0 >"$MNT/defrag" || fail "echo 0 > root defrag when idle failed"
check_eq "$(dkey "$MNT/$f/defrag" state)" idle "state after echo 0"
check_eq "$("${FSNAP[@]}" sha "$SRC/$f")" "$sha7" "checksum after junk writes"
check_eq "$(filefrag_records "$SRC/$f")" "$recs7" "extents after junk writes"

# ---- inode flags ---------------------------------------------------------
chattr +i "$SRC/s/f0"
on_cleanup chattr -i "'$SRC/s/f0'"
expect_skip "$MNT" "$SRC" s/f0 immutable
chattr -i "$SRC/s/f0"

chattr +a "$SRC/s/f1"
on_cleanup chattr -a "'$SRC/s/f1'"
expect_skip "$MNT" "$SRC" s/f1 append-only
chattr -a "$SRC/s/f1"

# chattr +j needs CAP_SYS_RESOURCE, which some sandboxes drop from the
# bounding set; the data=journal mount below covers the reason then.
if (($(printf '%d' "0x$(awk '/^CapEff:/ { print $2 }' /proc/self/status)") & (1 << 24))); then
	chattr +j "$SRC/s/f6" || fail "chattr +j failed"
	lsattr "$SRC/s/f6" | grep -q '^[^ ]*j' || fail "chattr +j did not set the journal data flag"
	expect_skip "$MNT" "$SRC" s/f6 data-journal
else
	log "no CAP_SYS_RESOURCE: chattr +j case not run (data=journal mount case still is)"
fi

# ---- locks of another process ---------------------------------------------
# flock(1) -o: the lock is held by flock itself, not by the sleep it runs.
# (Background helpers get no stdout/stderr: a test runner waits for the
# end of its pipes.)
flock -o "$SRC/s/f2" sleep 60 </dev/null >/dev/null 2>&1 &
flock_pid=$!
on_cleanup "kill $flock_pid"
for _ in $(seq 50); do flock -n "$SRC/s/f2" true || break; sleep 0.1; done
flock -n "$SRC/s/f2" true && fail "flock did not take the lock on f2"
sleep_pid=$(pgrep -P "$flock_pid") || fail "no sleep under flock"
on_cleanup "kill $sleep_pid"
expect_skip "$MNT" "$SRC" s/f2 locked
kill "$sleep_pid"
wait "$flock_pid" 2>/dev/null || true

python3 -c '
import fcntl, sys, time
f = open(sys.argv[1], "r+b")
fcntl.lockf(f, fcntl.LOCK_EX, 4096, 8192)   # a POSIX lock on a range
open(sys.argv[2], "w").close()
time.sleep(60)
' "$SRC/s/f3" "$T/locked" </dev/null >/dev/null 2>&1 &
lock_pid=$!
on_cleanup "kill $lock_pid"
for _ in $(seq 100); do [ -e "$T/locked" ] && break; sleep 0.1; done
[ -e "$T/locked" ] || fail "python did not take the fcntl lock on f3"
expect_skip "$MNT" "$SRC" s/f3 locked
kill "$lock_pid"; wait "$lock_pid" 2>/dev/null || true

# ---- a running executable --------------------------------------------------
exe=$SRC/x/e0
dd if=/usr/bin/sleep of="$exe" conv=notrunc,fsync status=none
truncate -s "$(stat -c %s /usr/bin/sleep)" "$exe"
chmod +x "$exe"
[ "$(filefrag_count "$exe")" -ge 4 ] || fail "the executable copy is not fragmented"
"$exe" 60 </dev/null >/dev/null 2>&1 &
exe_pid=$!
on_cleanup "kill $exe_pid"
for _ in $(seq 50); do [ "$(readlink "/proc/$exe_pid/exe")" = "$exe" ] && break; sleep 0.1; done
check_eq "$(readlink "/proc/$exe_pid/exe")" "$exe" "the fragmented executable runs"
expect_skip "$MNT" "$SRC" x/e0 running-executable
kill "$exe_pid"; wait "$exe_pid" 2>/dev/null || true

# ---- other filesystems: one image each, its own e4infofs --------------------
# fresh_fs NAME SIZE_MIB MOUNT_OPTS MKFS_OPTS...: sets FS_SRC and FS_MNT.
fresh_fs() {
	local name=$1 size=$2 opts=$3
	shift 3
	truncate -s "${size}M" "$T/$name.img"
	mkfs.ext4 -q -F "$@" "$T/$name.img" || fail "mkfs.ext4 $* failed"
	FS_SRC=$T/$name.src
	FS_MNT=$T/$name.mnt
	mount_image "$T/$name.img" "$FS_SRC" "$opts"
}

# data=journal mount.
fresh_fs dj 64 data=journal
findmnt -n -o OPTIONS "$FS_SRC" | grep -q data=journal || fail "data=journal not in the mount options"
"$MKFRAG" frag "$FS_SRC" f 2 512 16
mount_e4infofs "$FS_SRC" "$FS_MNT"
expect_skip "$FS_MNT" "$FS_SRC" f0 data-journal
stop_e4infofs "$FS_MNT"

# Block-mapped (ext3-style) files: no extent feature, so no fallocate; two
# files appended in turn with fsync interleave their blocks.
fresh_fs ne 64 "" -O ^extent,^64bit
python3 -c '
import os, sys
fds = [os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) for p in sys.argv[1:]]
for i in range(64):
    for n, fd in enumerate(fds):
        os.write(fd, bytes([65 + n + i % 20]) * 4096)
        os.fsync(fd)
' "$FS_SRC/b0" "$FS_SRC/b1"
lsattr "$FS_SRC/b0" | grep -q '^[^ ]*e' && fail "b0 is extent-mapped on a filesystem without extents"
# How far they interleave depends on the kernel's allocator (at least 8 runs on
# earlier machines, 7 on a 6.18 kernel); more than one run makes b0 a file
# a defragmenter would move, which is all the skip needs.
[ "$(filefrag_count "$FS_SRC/b0")" -ge 2 ] || fail "b0 is not fragmented: $(filefrag "$FS_SRC/b0")"
mount_e4infofs "$FS_SRC" "$FS_MNT"
expect_skip "$FS_MNT" "$FS_SRC" b0 non-extent
stop_e4infofs "$FS_MNT"

# Inline data: a 60-byte file lives in the inode. The checks run inode flags
# before the size, so the reason is inline-data (not too-small).
fresh_fs il 32 "" -O inline_data
head -c 60 /dev/urandom >"$FS_SRC/tiny"
sync
filefrag -v "$FS_SRC/tiny" | grep -q inline || fail "tiny is not inline: $(filefrag -v "$FS_SRC/tiny")"
mount_e4infofs "$FS_SRC" "$FS_MNT"
expect_skip "$FS_MNT" "$FS_SRC" tiny inline-data
stop_e4infofs "$FS_MNT"

# A nearly full filesystem: no room for a donor of the file.
fresh_fs full 64 "" -m 0
"$MKFRAG" frag "$FS_SRC" f 2 8192 16     # 512 runs each
avail=$(df -B1 --output=avail "$FS_SRC" | tail -n 1)
fallocate -l $((avail - 2 * 1024 * 1024)) "$FS_SRC/filler" || fail "fallocate filler failed"
sync
avail=$(df -B1 --output=avail "$FS_SRC" | tail -n 1)
[ "$avail" -lt $((8 * 1024 * 1024)) ] || fail "still $avail bytes free"
mount_e4infofs "$FS_SRC" "$FS_MNT"
expect_skip "$FS_MNT" "$FS_SRC" f0 no-space
# The same file in a subtree job: skipped for no-space too, not failed.
echo 1 >"$FS_MNT/defrag" || fail "subtree job on a full filesystem failed"
check_eq "$(dkey "$FS_MNT/defrag" failed)" 0 "full fs, subtree: failed"
[ "$(dkey "$FS_MNT/defrag" skipped_no-space)" -ge 2 ] ||
	fail "full fs, subtree: f0 and f1 not skipped for no-space: $(tr '\n' ' ' <"$FS_MNT/defrag")"
check "f0 content on the full fs" "$MKFRAG" verify frag "$FS_SRC/f0" 0
check "f1 content on the full fs" "$MKFRAG" verify frag "$FS_SRC/f1" 1
stop_e4infofs "$FS_MNT"

# Room for the data but not for the span across its holes: 16 MiB of data
# in 64 KiB every 128 KiB (holes as large as the data) and about 26 MiB
# free in one area. A donor allocated as one 32 MiB span with the holes
# punched out afterwards finds no room (no-space); one allocated range by
# range does. h0 is a fragmented 32 MiB file with every other 64 KiB
# punched out.
fresh_fs holes 128 ""
fallocate -l 20M "$FS_SRC/room" || fail "fallocate room failed"
"$MKFRAG" frag "$FS_SRC" h 2 32768 16
for ((i = 64; i < 32768; i += 128)); do
	fallocate -p -o $((i * 1024)) -l 65536 "$FS_SRC/h0" || fail "punching h0 failed"
done
avail=$(df -B1 --output=avail "$FS_SRC" | tail -n 1)
fallocate -l "$avail" "$FS_SRC/filler" || fail "fallocate filler failed"
rm "$FS_SRC/room"
sync
free_b=$(stat -f -c '%f * %S' "$FS_SRC")
free_b=$((free_b))
[ "$free_b" -gt $((17 * 1024 * 1024)) ] && [ "$free_b" -lt $((31 * 1024 * 1024)) ] ||
	fail "holes: $free_b bytes free, not between the data (16 MiB) and the span (32 MiB)"
runs_h=$(filefrag_count "$FS_SRC/h0")
[ "$runs_h" -ge 256 ] || fail "h0 is not fragmented: $runs_h runs"
sha_h=$("${FSNAP[@]}" sha "$FS_SRC/h0")
blocks_h=$(stat -c %b "$FS_SRC/h0")
mount_e4infofs "$FS_SRC" "$FS_MNT"
echo 1 >"$FS_MNT/h0/defrag" || fail "echo 1 > h0/defrag failed"
check_eq "$(dkey "$FS_MNT/h0/defrag" improved)" 1 "h0 (room for its data, not its span): improved; status: $(tr "\n" " " <"$FS_MNT/h0/defrag")"
log "holes: h0 $runs_h -> $(filefrag_count "$FS_SRC/h0") runs with $((free_b >> 20)) MiB free"
check_eq "$("${FSNAP[@]}" sha "$FS_SRC/h0")" "$sha_h" "h0 checksum"
check_eq "$(stat -c %b "$FS_SRC/h0")" "$blocks_h" "h0 blocks (holes stay holes)"
stop_e4infofs "$FS_MNT"

# Files deleted between the walk and their turn in a subtree job: skipped
# as changed, not failed (the handle of a deleted inode opens with ESTALE).
# One thread; the two 96 MiB files go first (large files first), the small
# ones are deleted while the first moves.
fresh_fs gone 512 ""
mkdir "$FS_SRC/d"
"$MKFRAG" frag "$FS_SRC/d" big 2 98304 16
"$MKFRAG" frag "$FS_SRC/d" s 2 1024 16
mount_e4infofs "$FS_SRC" "$FS_MNT" -o defrag_threads=1
( echo 1 >"$FS_MNT/d/defrag" ) 2>"$T/gone.err" &
job=$!
wait_moving "$FS_MNT/d/defrag"
rm "$FS_SRC/d/s0" "$FS_SRC/d/s1"
wait "$job" || fail "the job with deleted files failed: $(cat "$T/gone.err"); $(tr '\n' ' ' <"$FS_MNT/d/defrag")"
log "deleted during the job: $(tr '\n' ' ' <"$FS_MNT/d/defrag")"
check_eq "$(dkey "$FS_MNT/d/defrag" failed)" 0 "deleted files: failed"
check_eq "$(dkey "$FS_MNT/d/defrag" skipped_changed)" 2 "deleted files: skipped_changed"
check_eq "$(dkey "$FS_MNT/d/defrag" improved)" 2 "deleted files: improved (the two large ones)"
stop_e4infofs "$FS_MNT"

# ---- read-only source: EROFS ---------------------------------------------------
f=s/f8
sha8=$("${FSNAP[@]}" sha "$SRC/$f")
recs8=$(filefrag_records "$SRC/$f")
mount -o remount,ro "$SRC" || fail "remount,ro $SRC failed"
for node in "$f" s ""; do
	if out=$( { echo 1 >"$MNT${node:+/$node}/defrag"; } 2>&1); then
		fail "echo 1 > /$node/defrag on a read-only source succeeded"
	fi
	[[ $out == *"Read-only file system"* ]] || fail "/$node/defrag on a read-only source: expected EROFS, got: $out"
done
check_eq "$("${FSNAP[@]}" sha "$SRC/$f")" "$sha8" "checksum on the read-only source"
check_eq "$(filefrag_records "$SRC/$f")" "$recs8" "extents on the read-only source"
mount -o remount,rw "$SRC" || fail "remount,rw $SRC failed"

# The files that were skipped are still intact (pattern check).
for i in 0 1 2 3 6 7 8; do check "s/f$i content" "$MKFRAG" verify frag "$SRC/s/f$i" "$i"; done

# ---- an active swap file (last: a failure here hides no other case) ---------
sw=$SRC/s/f5
chmod 600 "$sw"
mkswap "$sw" >/dev/null || fail "mkswap failed"
sync
swapon "$sw" || fail "swapon $sw failed"
on_cleanup swapoff "'$sw'"
expect_skip "$MNT" "$SRC" s/f5 swapfile
swapoff "$sw"

stop_e4infofs
log "ok"
