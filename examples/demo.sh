#!/usr/bin/env bash
# The README's demo: builds a small (128 MiB) ext4 image with fragmented
# files, mounts it and e4infofs over it, shows score, a file's extents, and
# the root's stats and report, defragments the tree with `echo 1 > defrag`
# and shows the result, then removes everything again.
#
#   bash examples/demo.sh            (as root, from the repository root)
#
# E4INFOFS and MKFRAG name the programs (default: build/fusefs/e4infofs and
# build/tests/tools/mkfrag of this checkout).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
E4INFOFS=${E4INFOFS:-$repo/build/fusefs/e4infofs}
MKFRAG=${MKFRAG:-$repo/build/tests/tools/mkfrag}

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root (loop devices, mount, FUSE)" >&2
	exit 1
fi
for p in "$E4INFOFS" "$MKFRAG"; do
	if [ ! -x "$p" ]; then
		echo "demo: $p is missing: build first (ninja -C build)" >&2
		exit 1
	fi
done

T=$(mktemp -d "${TMPDIR:-/tmp}/e4infofs-demo.XXXXXX")
LOOP=""
PID=""
cleanup() {
	set +e
	if findmnt -n --mountpoint "$T/mnt" >/dev/null 2>&1; then
		# umount waits for the daemon where umount.fuse.e4infofs is installed.
		umount "$T/mnt" 2>/dev/null || fusermount3 -u "$T/mnt" 2>/dev/null || umount -l "$T/mnt"
	fi
	if [ -n "$PID" ]; then
		for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
		kill "$PID" 2>/dev/null
		wait "$PID" 2>/dev/null
	fi
	if findmnt -n --mountpoint "$T/src" >/dev/null 2>&1; then
		umount "$T/src" 2>/dev/null || umount -l "$T/src"
	fi
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	findmnt -rn -o TARGET | grep -qF "$T" || rm -rf --one-file-system "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -t 1 ]; then
	heading() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	heading() { printf '\n== %s\n' "$*"; }
fi

heading "Building a 128 MiB ext4 image with fragmented files"
mkdir "$T/src" "$T/mnt"
truncate -s 128M "$T/ext4.img"
mkfs.ext4 -q -F "$T/ext4.img"
LOOP=$(losetup -f --show "$T/ext4.img")
mount "$LOOP" "$T/src"
mkdir -p "$T/src/home/alice" "$T/src/home/bob/music" "$T/src/var/log" "$T/src/srv"
"$MKFRAG" frag "$T/src/home/alice" photo 4 2048 8      # 4 x 2 MiB, ~256 extents each
"$MKFRAG" frag "$T/src/home/bob/music" track 6 1024 64 # 6 x 1 MiB, ~16 extents each
"$MKFRAG" frag "$T/src/var/log" syslog 3 512 4         # badly fragmented logs
"$MKFRAG" sparse "$T/src/var/log/lastlog" 4096         # sparse
"$MKFRAG" prealloc "$T/src/srv/db" 4096                # preallocated ranges
"$MKFRAG" frag "$T/src/srv" backup 1 4096 4096         # one contiguous 4 MiB file
mv "$T/src/home/alice/photo0" "$T/src/home/alice/vm.img"
sync
echo "image: $T/ext4.img on $LOOP, mounted on $T/src"

heading "Mounting e4infofs: $E4INFOFS $T/src $T/mnt"
"$E4INFOFS" "$T/src" "$T/mnt" -f >"$T/daemon.log" 2>&1 &
PID=$!
for _ in $(seq 100); do
	findmnt -n -t fuse.e4infofs "$T/mnt" >/dev/null 2>&1 && break
	if ! kill -0 "$PID" 2>/dev/null; then
		cat "$T/daemon.log" >&2
		echo "demo: e4infofs failed to start" >&2
		exit 1
	fi
	sleep 0.1
done
findmnt -n -t fuse.e4infofs "$T/mnt" >/dev/null || { cat "$T/daemon.log" >&2; exit 1; }
findmnt --mountpoint "$T/mnt"

cd "$T/mnt"
heading "ls -F (files appear as directories of attribute files)"
ls -F
ls -F home/alice/vm.img

heading "cat score"
cat score

heading "cat home/alice/vm.img/extents | head"
head -n 12 home/alice/vm.img/extents
echo "..."
tail -n 1 home/alice/vm.img/extents

heading "cat stats"
cat stats

heading "cat report"
cat report

heading "echo 1 > defrag (online, returns when done), then cat defrag and score"
echo 1 > defrag
cat defrag
echo "score now: $(cat score)"
echo "vm.img now: $(tail -n 1 home/alice/vm.img/extents)"
cd /

heading "Cleaning up"
