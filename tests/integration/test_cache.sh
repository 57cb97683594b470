#!/usr/bin/env bash
# The cache's memory (issue 18): on 100,000 files in 1,000 directories the
# daemon takes at most 100 bytes per cached file above its baseline RSS
# (e4infofs_cache_bytes too), and with -o cache_mib=1, a cap well below
# what that tree needs, the cache stays within the cap after each read
# while scores, stats and top files stay those of the uncapped daemon and
# e4defrag -c's, also after a change in a dropped directory.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
setup_image 1024 -b 4096 -N 140000

DIRS=1000 PER=100
FILES=$((DIRS * PER))
python3 - "$SRC" "$DIRS" "$PER" <<'EOF2'
import os, sys
src, dirs, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for d in range(dirs):
    p = f"{src}/d{d // 100}/e{d}"
    os.makedirs(p)
    for f in range(per):
        with open(f"{p}/f{f}", "wb") as fh:
            fh.write(b"x" * (1 + (d * per + f) * 7919 % 12000))
EOF2
# Fragmented files (kept in side records) in a few directories.
for i in 3 250 777; do
	"$MKFRAG" frag "$SRC/d$((i / 100))/e$i" frag 3 64 4
done
"$MKFRAG" frag "$SRC" root 2 64 4
sync
FILES=$((FILES + 4))

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
metric_of() {
	local v
	v=$(awk -v n="$2" '$1 == n { print $2 }' "$1/metrics") || fail "cannot read $1/metrics"
	[ -n "$v" ] || fail "no metric $2 in $1/metrics"
	echo "$v"
}

# The uncapped daemon: memory per cached file.
mount_e4infofs "$SRC" "$T/ref"
REF=$T/ref REF_PID=$LAST_PID
base=$(rss_kib "$REF_PID")
cat "$REF/score" >/dev/null || fail "cannot read $REF/score"
rss=$(rss_kib "$REF_PID")
per_file=$(((rss - base) * 1024 / FILES))
cache=$(metric_of "$REF" e4infofs_cache_bytes)
log "uncapped: $per_file bytes per file above the baseline RSS ($base KiB), e4infofs_cache_bytes $cache ($((cache / FILES)) per file)"
# Under ASan every allocation has redzones and freed memory is quarantined:
# RSS then says nothing of the daemon's own cost.
if ldd "$E4INFOFS" 2>/dev/null | grep -q libasan; then
	log "sanitized build: RSS per file not checked"
else
	[ "$per_file" -le 100 ] || fail "$per_file bytes of RSS per cached file, more than 100"
fi
[ $((cache / FILES)) -le 100 ] || fail "e4infofs_cache_bytes: $((cache / FILES)) bytes per file, more than 100"
CAP=$((1 << 20))
[ "$cache" -gt $((2 * CAP)) ] || fail "the tree takes $cache bytes: too small to test a cap of $CAP"

start_e4infofs -o cache_mib=1

# same_as_ref WHAT: score, stats (without the scan's time) and report of
# the root, a subtree and a leaf directory are the uncapped daemon's, and
# the cache is within the cap afterwards.
same_as_ref() {
	local node f a b c
	for node in "" /d2 /d7/e777 /d2/e250; do
		for f in score stats report; do
			a=$(grep -v '^scan' "$MNT$node/$f") || fail "$1: cannot read $MNT$node/$f"
			b=$(grep -v '^scan' "$REF$node/$f") || fail "$1: cannot read $REF$node/$f"
			[ "$a" = "$b" ] || fail "$1: $node/$f differs from the uncapped daemon:
$(diff <(echo "$a") <(echo "$b") | head -20)"
			c=$(metric_of "$MNT" e4infofs_cache_bytes)
			[ "$c" -le "$CAP" ] || fail "$1: after reading $node/$f the cache takes $c bytes, more than $CAP"
		done
	done
}

same_as_ref "first reads"
dropped=$(metric_of "$MNT" e4infofs_cache_dirs_dropped_total)
[ "$dropped" -gt 0 ] || fail "no directory dropped with a cap of $CAP below $cache bytes"
check_eq "$(cat "$MNT/score")" "$(e4defrag_score "$SRC")" "score with cache_mib=1 against e4defrag -c"
same_as_ref "second reads"

# A change in a directory the cap dropped (the least recently read).
"$MKFRAG" frag "$SRC/d0/e5" newfrag 4 64 4
printf 'more' >>"$SRC/d9/e901/f3"
rm "$SRC/d5/e512/f7"
sync
same_as_ref "after changes"
check_eq "$(cat "$MNT/score")" "$(e4defrag_score "$SRC")" "score after changes against e4defrag -c"
log "cache_mib=1: $(metric_of "$MNT" e4infofs_cache_bytes) bytes cached, $(metric_of "$MNT" e4infofs_cache_dirs_dropped_total) directories dropped; figures equal to the uncapped daemon's"

# A long first scan shows its progress in metrics (issue 18): a read of
# metrics does not wait for a scan under way, and says how far it is. One thread, every file opened, caches dropped: a scan of
# these 100,000 files that takes seconds.
stop_e4infofs "$REF"
stop_e4infofs
mount_e4infofs "$SRC" "$T/slow" -o scan_threads=1,raw_inodes=0
SLOW=$T/slow
sync
echo 3 >/proc/sys/vm/drop_caches
t0=$EPOCHREALTIME
cat "$SLOW/score" >"$T/slow.score" &
reader=$!
# The first read of metrics must come after the score's scan began: one
# that came first would make the cold scan its own, and wait for it.
# cat is then inside its open or read of score (syscall 257 or 0).
for _ in $(seq 200); do
	case $(cut -d' ' -f1 "/proc/$reader/syscall" 2>/dev/null) in 257 | 0) break ;; esac
	sleep 0.01
done
sleep 0.05
seen=0 files=0 dirs=0 slowest=0
while kill -0 "$reader" 2>/dev/null; do
	m0=$EPOCHREALTIME
	out=$(cat "$SLOW/metrics") || fail "cannot read metrics during the scan"
	ms=$(awk -v a="$m0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }')
	if [ "$(awk '$1 == "e4infofs_scan_running" { print $2 }' <<<"$out")" = 1 ]; then
		el=$(awk '$1 == "e4infofs_scan_elapsed_seconds" { print $2 }' <<<"$out")
		if awk -v e="$el" 'BEGIN { exit !(e >= 0.2) }'; then
			seen=$((seen + 1))
			[ "$ms" -gt "$slowest" ] && slowest=$ms
			files=$(awk '$1 == "e4infofs_scan_files" { print $2 }' <<<"$out")
			dirs=$(awk '$1 == "e4infofs_scan_dirs" { print $2 }' <<<"$out")
		fi
	fi
	sleep 0.1
done
wait "$reader" || fail "the slow read of score failed"
took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
log "progress: the scan took $took s; $seen metrics reads during it, the slowest in $slowest ms; last seen $files files, $dirs directories"
[ "$seen" -ge 2 ] || fail "no progress seen in metrics during a scan of $took s"
[ "$slowest" -lt 500 ] || fail "a metrics read during the scan took $slowest ms: it waited for the scan"
[ "$files" -gt 0 ] && [ "$files" -le "$FILES" ] || fail "scan_files $files during the scan"
[ "$dirs" -gt 0 ] && [ "$dirs" -le $((DIRS + 20)) ] || fail "scan_dirs $dirs during the scan"
check_eq "$(metric_of "$SLOW" e4infofs_scan_running)" 0 "scan_running after the scan"
check_eq "$(metric_of "$SLOW" e4infofs_scan_files)" 0 "scan_files after the scan"
check_eq "$(cat "$T/slow.score")" "$(e4defrag_score "$SRC")" "the slow daemon's score"
