#!/usr/bin/env bash
# The root's `freespace` against `e2freefrag DEVICE` on the same mounted
# device (which reads the same FS_IOC_GETFSMAP): total free blocks, free
# extents, min/max/avg extent in KiB, block size and every histogram row.
# On a 1 KiB-block image with holes left by deleted fragmented files, after
# a change (freespace is generated at open), on a 4 KiB-block image with
# swiss-cheese free space, and through a block-device SOURCE.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
require_cmd e2freefrag
CMP=$(dirname "$0")/freefrag_cmp.py

# compare WHAT MOUNT DEVICE
compare() {
	local what=$1 mnt=$2 dev=$3 out
	sync
	cat "$mnt/freespace" >"$T/freespace.txt" || fail "$what: cannot read $mnt/freespace"
	e2freefrag "$dev" >"$T/e2freefrag.txt" 2>&1 || fail "$what: e2freefrag $dev failed: $(cat "$T/e2freefrag.txt")"
	out=$(python3 "$CMP" "$T/freespace.txt" "$T/e2freefrag.txt") ||
		fail "$what: freespace differs from e2freefrag $dev:
$out
--- freespace:
$(cat "$T/freespace.txt")
--- e2freefrag:
$(cat "$T/e2freefrag.txt")"
	log "$what: $out"
}

# ---- 1 KiB blocks, holes of deleted fragmented files -----------------------------
setup_image 128
mkdir -p "$SRC/a" "$SRC/b"
"$MKFRAG" frag "$SRC/a" f 4 2048 8
"$MKFRAG" frag "$SRC/b" g 3 1024 3
rm "$SRC/a/f1" "$SRC/a/f3" "$SRC/b/g0"
start_e4infofs
[ -f "$MNT/freespace" ] || fail "no freespace at the root"
[ ! -e "$MNT/a/freespace" ] || fail "freespace in a subdirectory"
[ ! -e "$MNT/a/f0/freespace" ] || fail "freespace in a file's directory"
check_eq "$(stat -c %s "$MNT/freespace")" 0 "size of freespace"
compare "1k blocks, holes" "$MNT" "$LOOP"
check_eq "$(sed -n 's/^block_size: //p' "$MNT/freespace")" 1024 "block_size"

# Generated at open: a new file and a deletion show at once.
"$MKFRAG" frag "$SRC" h 2 4096 16
rm "$SRC/a/f0"
compare "1k blocks, after a change" "$MNT" "$LOOP"

# The same through the device as SOURCE.
mount_e4infofs "$LOOP" "$T/mnt-dev"
compare "block device as SOURCE" "$T/mnt-dev" "$LOOP"
cmp -s "$MNT/freespace" "$T/mnt-dev/freespace" || fail "freespace differs between the directory and the device mount"
stop_e4infofs "$T/mnt-dev"
stop_e4infofs

# ---- 4 KiB blocks, swiss-cheese free space -------------------------------------------
truncate -s 256M "$T/img4k"
mkfs.ext4 -q -F -b 4096 "$T/img4k"
attach_loop "$T/img4k" LOOP4K
mkdir -p "$T/src4k"
mount "$LOOP4K" "$T/src4k"
on_cleanup "umount '$T/src4k'"
"$MKFRAG" frag "$T/src4k" big 2 8192 64
"$MKFRAG" cheese "$T/src4k"
mount_e4infofs "$T/src4k" "$T/mnt4k"
compare "4k blocks, swiss cheese" "$T/mnt4k" "$LOOP4K"
check_eq "$(sed -n 's/^block_size: //p' "$T/mnt4k/freespace")" 4096 "block_size (4k)"
rm "$T/src4k/.cheese"
compare "4k blocks, cheese removed" "$T/mnt4k" "$LOOP4K"
stop_e4infofs "$T/mnt4k"
log "ok"
