#!/usr/bin/env bash
# A defrag leaves the page cache as it found it: the engine reads every
# chunk ahead before moving it (the kernel would read it page by page) and
# drops what it read, so a file nobody had cached has no page cached after
# its move, and a file partly cached has exactly the same pages cached
# (re-read after the move). Content and the gain are checked too.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
require_cmd fincore dd
setup_image 256

mkdir -p "$SRC/p"
"$MKFRAG" frag "$SRC/p" f 2 16384 16 # 2 x 16 MiB, ~1,024 runs each
sync
start_e4infofs

pages() { fincore --noheadings --output PAGES "$1" | tr -d ' '; }

sha0=$("${FSNAP[@]}" sha "$SRC/p/f0")
sha1=$("${FSNAP[@]}" sha "$SRC/p/f1")
runs0=$(filefrag_count "$SRC/p/f0")
[ "$runs0" -ge 500 ] || fail "p/f0 has only $runs0 runs: nothing to test"

drop_caches
# f0: its first 4 MiB read (with the kernel's own readahead beyond), f1 cold.
dd if="$SRC/p/f0" of=/dev/null bs=1M count=4 status=none
# The kernel's readahead beyond the 4 MiB completes asynchronously.
cached0=$(pages "$SRC/p/f0")
for _ in $(seq 50); do
	sleep 0.2
	now=$(pages "$SRC/p/f0")
	[ "$now" = "$cached0" ] && break
	cached0=$now
done
check_eq "$(pages "$SRC/p/f1")" 0 "pages of p/f1 cached before"
[ "$cached0" -ge 1024 ] && [ "$cached0" -lt 4096 ] || fail "p/f0: $cached0 pages cached after reading 4 MiB"
log "before: p/f0 $cached0 pages cached, p/f1 none"

for f in f0 f1; do
	echo 1 >"$MNT/p/$f/defrag" || fail "echo 1 > p/$f/defrag failed"
	check_eq "$(dkey "$MNT/p/$f/defrag" improved)" 1 "p/$f improved"
done
[ "$(filefrag_count "$SRC/p/f0")" -lt 10 ] || fail "p/f0 still has $(filefrag_count "$SRC/p/f0") runs"

check_eq "$(pages "$SRC/p/f1")" 0 "pages of p/f1 cached after its move (it had none)"
# The pages that were cached are read back asynchronously: give them time.
for _ in $(seq 50); do
	[ "$(pages "$SRC/p/f0")" = "$cached0" ] && break
	sleep 0.1
done
check_eq "$(pages "$SRC/p/f0")" "$cached0" "pages of p/f0 cached after its move"

check_eq "$("${FSNAP[@]}" sha "$SRC/p/f0")" "$sha0" "checksum of p/f0"
check_eq "$("${FSNAP[@]}" sha "$SRC/p/f1")" "$sha1" "checksum of p/f1"

# The cache is recorded chunk by chunk, so the daemon's memory follows the
# data moved, not the file's size: 8 MiB of data in a file of 2 TiB (one
# byte per page of the whole size would be 512 MiB).
"$MKFRAG" frag "$SRC/p" s 2 8192 16 # 2 x 8 MiB, ~512 runs each
truncate -s 2T "$SRC/p/s0"
sync
shas=$(head -c 8M "$SRC/p/s0" | sha256sum)
blocks_s=$(stat -c %b "$SRC/p/s0")
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$DAEMON_PID/status"; }
hwm0=$(hwm)
echo 1 >"$MNT/p/s0/defrag" || fail "echo 1 > p/s0/defrag failed"
check_eq "$(dkey "$MNT/p/s0/defrag" improved)" 1 "p/s0 improved"
grown=$(($(hwm) - hwm0))
log "sparse 2 TiB file: peak RSS grew by $grown KiB"
[ "$grown" -lt 65536 ] || fail "the daemon's peak RSS grew by $grown KiB moving 8 MiB of a 2 TiB file"
check_eq "$(stat -c %s "$SRC/p/s0")" $((2 << 40)) "size of p/s0"
check_eq "$(stat -c %b "$SRC/p/s0")" "$blocks_s" "blocks of p/s0 (the hole stays a hole)"
check_eq "$(head -c 8M "$SRC/p/s0" | sha256sum)" "$shas" "checksum of p/s0's data"
[ "$(filefrag_count "$SRC/p/s0")" -lt 10 ] || fail "p/s0 still has $(filefrag_count "$SRC/p/s0") runs"
log "ok"
