#!/usr/bin/env bash
# core/itable.c (reading inodes raw from the block device, what a root
# daemon's cold scan uses) against the kernel's answers: for every file of
# trees made on several mkfs variants, the raw reading declines or agrees
# with open+fstat+FIEMAP+getxattr on size, blocks, links, ctime, skip
# reason, every figure and the exclusion mark (tests/tools/itablecheck).
# A file whose inode checksum does not hold is declined, never read.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
CHECK=${ITABLECHECK:?ITABLECHECK is set by meson}

xattr() { python3 -c 'import os, sys; os.setxattr(sys.argv[1], sys.argv[2], sys.argv[3].encode())' "$@"; }

populate() {
	local d=$1
	mkdir -p "$d/frag" "$d/odd" "$d/deep/a/b"
	"$MKFRAG" frag "$d/frag" f 4 1024 16              # 64 extents: depth 1
	"$MKFRAG" frag "$d/frag" big 2 16384 4            # 4,096 extents: depth 2
	"$MKFRAG" frag "$d/deep/a/b" contig 1 4096 4096
	"$MKFRAG" sparse "$d/odd/sparse" 4096
	"$MKFRAG" prealloc "$d/odd/prealloc" 2048
	: >"$d/odd/empty"
	printf x >"$d/odd/one-byte"
	fallocate -l 1M "$d/odd/all-unwritten"
	: >"$d/odd/keep-size-only"
	fallocate -n -l 64K "$d/odd/keep-size-only"
	truncate -s 10M "$d/odd/all-hole"
	head -c 300000 /dev/urandom >"$d/odd/delalloc"        # not synced by hand
	ln "$d/odd/one-byte" "$d/odd/hardlink"
	# The exclusion mark: in the inode, false, and in an external block
	# (a large neighbour pushes it out of the inode).
	printf y >"$d/odd/marked" && xattr "$d/odd/marked" user.e4infofs.exclude 1
	printf y >"$d/odd/zero" && xattr "$d/odd/zero" user.e4infofs.exclude 0
	printf y >"$d/odd/outside"
	xattr "$d/odd/outside" user.big "$(head -c 600 /dev/zero | tr '\0' x)"
	xattr "$d/odd/outside" user.e4infofs.exclude yes
	touch -d '2300-01-01 00:00:00.123456789' "$d/odd/one-byte" # ctime is now; mtime far
	for i in $(seq 1 200); do printf '%d' "$i" >"$d/deep/a/s$i"; done
}

# run_variant NAME MKFS_OPTS...: sets s to itablecheck's summary line (not
# run in $(...), where set -e would not stop a failing step).
run_variant() {
	local name=$1 out
	shift
	mkfs.ext4 -q -F "$@" "$IMG" || fail "$name: mkfs.ext4 $* failed"
	mount "$LOOP" "$SRC" || fail "$name: mount failed"
	populate "$SRC/t"
	out=$("$CHECK" "$LOOP" "$SRC/t") || { echo "$out" >&2; fail "$name: the raw reading differs from the kernel's"; }
	umount "$SRC"
	s=${out##*$'\n'}
	log "$name: $s"
}

field() { awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' <<<"$1"; }

setup_image 256
umount "$SRC"
FILES=219
for variant in "4k -b 4096" "no-csum -O ^metadata_csum" "1k -b 1024" "no64 -O ^64bit" "i128 -I 128"; do
	name=${variant%% *}
	opts=()
	[ "$name" != "$variant" ] && read -r -a opts <<<"${variant#* }"
	run_variant "$name" "${opts[@]}"
	check_eq "$(field "$s" files)" "$FILES" "$name: files seen"
	# Everything but the declined is compared; only what the reader
	# cannot take (none on these variants) may be declined.
	check_eq "$(field "$s" declined)" 0 "$name: files declined"
done

# Through the daemon: a cold read of the same tree with raw readings (the
# default for root) and without them gives the same figures, and the
# counters say which path served.
mkfs.ext4 -q -F -b 4096 "$IMG"
mount "$LOOP" "$SRC"
populate "$SRC/t"
start_e4infofs
raw_stats=$(grep -v "^scan" "$MNT/t/stats")
check_eq "$(metric e4infofs_raw_inspections_total)" "$(metric e4infofs_inspections_total)" "raw: every inspection raw"
check "raw: files were inspected" test "$(metric e4infofs_raw_inspections_total)" -ge "$FILES"
# Files made after the daemon read the tables (past their high-water
# marks then), read cold in a directory of their own: raw too.
before=$(metric e4infofs_raw_inspections_total)
mkdir "$SRC/later"
for i in $(seq 1 300); do printf '%d' "$i" >"$SRC/later/n$i"; done
cat "$MNT/later/score" >/dev/null
check_eq "$(($(metric e4infofs_raw_inspections_total) - before))" 300 "raw: files made after the mount"
stop_e4infofs
start_e4infofs -o raw_inodes=0
check_eq "$(grep -v "^scan" "$MNT/t/stats")" "$raw_stats" "stats with and without raw readings"
check_eq "$(metric e4infofs_raw_inspections_total)" 0 "raw_inodes=0: no raw inspection"
stop_e4infofs
umount "$SRC"

# Inline data: small files live in the inode and go to the kernel.
run_variant inline -O inline_data
check "inline: the 200 small files are declined ($s)" test "$(field "$s" declined)" -ge 200

# A damaged inode checksum: declined, not read.
mkfs.ext4 -q -F "$IMG"
mount "$LOOP" "$SRC"
"$MKFRAG" frag "$SRC" victim 1 64 64
"$MKFRAG" frag "$SRC" intact 1 64 64
ino=$(stat -c %i "$SRC/victim0")
intact=$(stat -c %i "$SRC/intact0")
umount "$SRC"
debugfs -w -R "sif <$ino> checksum 0x1234" "$IMG" >/dev/null 2>&1 || fail "debugfs could not set the checksum"
mount "$LOOP" "$SRC"
check "damaged: the kernel refuses the inode too" test "$(stat -c %i "$SRC/victim0" 2>/dev/null)" != "$ino"
check_eq "$("$CHECK" "$LOOP" "$SRC" "$ino")" declined "damaged: the inode with the bad checksum"
check_eq "$("$CHECK" "$LOOP" "$SRC" "$intact")" raw "damaged: its intact neighbour"
umount "$SRC"
log "ok"
