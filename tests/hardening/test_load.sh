#!/usr/bin/env bash
# Many concurrent users: 200 parallel readers of stats, stats.json, report,
# extents and score across a tree of 52 directories and 240 files (every
# attribute file once per round), while 50
# other processes hold 6 attribute files open each (300 open handles) and
# the source changes under them (appends in every directory, so scans have
# work). Three rounds. Every read succeeds; the daemon's VmRSS and thread
# count stay bounded (figures logged; bounds below); RSS after round 3 is
# not above RSS after round 1 by more than a few MiB (no leak per round).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
setup_image 512
t_start=$(now_s)

# Bounds. libfuse's default loop has at most 10 workers; the daemon adds
# its main thread, the fanotify thread and the scan pool (-o scan_threads,
# 16), 28 in all; the bound leaves 8 for glib's and libfuse's transient
# threads, as it did with 4 scan threads (bound 24). ASan keeps freed
# memory in quarantine (up to 256 MiB), so its RSS bound is wider.
MAX_THREADS=36
if is_asan; then
	MAX_RSS_GROWTH_KIB=$((512 * 1024))
	MAX_ROUND_GROWTH_KIB=$((300 * 1024))
else
	MAX_RSS_GROWTH_KIB=$((64 * 1024))
	MAX_ROUND_GROWTH_KIB=$((8 * 1024))
fi

for g in 0 1 2 3; do
	for i in 0 1 2 3 4 5; do
		d=$SRC/g$g/d$i
		mkdir -p "$d/sub"
		"$MKFRAG" frag "$d" f 5 256 16        # 5 x 256 KiB, 16 runs each
		"$MKFRAG" frag "$d/sub" s 5 128 8
	done
done
sync
log "tree built in $(elapsed_ms "$t_start") ms"
start_e4infofs
pid=$DAEMON_PID

# The attribute files read: of every directory and every file.
find "$SRC" -mindepth 1 -path "$SRC/lost+found" -prune -o -type d -printf '%P\n' >"$T/dirs"
find "$SRC" -path "$SRC/lost+found" -prune -o -type f -printf '%P\n' >"$T/files"
{
	for a in score stats report; do echo "$MNT/$a"; done
	while read -r d; do
		for a in stats stats.json report extents score; do echo "$MNT/$d/$a"; done
	done <"$T/dirs"
	while read -r f; do
		for a in extents stats score; do echo "$MNT/$f/$a"; done
	done <"$T/files"
} >"$T/paths"
npaths=$(wc -l <"$T/paths")
log "$(wc -l <"$T/dirs") directories, $(wc -l <"$T/files") files, $npaths attribute files"

# Warm-up: every file read once.
xargs -a "$T/paths" cat >/dev/null || fail "warm-up reads failed"
rss0=$(rss_kib "$pid")
thr0=$(threads_of "$pid")
log "after warm-up: VmRSS $rss0 KiB, $thr0 threads"

# Sampler: VmRSS and threads every 50 ms.
(
	while kill -0 "$pid" 2>/dev/null && [ ! -e "$T/stop.sampler" ]; do
		echo "$(rss_kib "$pid") $(threads_of "$pid")" 2>/dev/null || true
		sleep 0.05
	done
) >"$T/samples" &
sampler=$!

cat >"$T/reader.sh" <<'EOF'
# reader.sh PATH...: cat each; a failure or an empty content is reported.
for p; do
	out=$(cat "$p" 2>&1) || { echo "FAIL $p: $out"; continue; }
	[ -n "$out" ] || echo "EMPTY $p"
done
EOF

round_rss=()
for round in 1 2 3; do
	# The source changes: one append in every directory (fanotify events).
	while read -r d; do
		head -c 8192 /dev/urandom >>"$SRC/$d/new.$round"
	done <"$T/dirs"
	# 50 holders: 6 attribute files each, opened and held 3 s.
	"${HW[@]}" hold 50 6 3 "$T/ready.$round" "$T/paths" "$round" >"$T/held.$round" 2>&1 &
	holders=$!
	for _ in $(seq 400); do
		[ -e "$T/ready.$round" ] && break
		sleep 0.05
	done
	[ -e "$T/ready.$round" ] || fail "round $round: the 50 holders did not open their files within 20 s"
	# 200 parallel readers over every attribute file.
	t0=$(now_s)
	shuf "$T/paths" | xargs -d '\n' -P 200 -n $((npaths / 200 + 1)) bash "$T/reader.sh" >"$T/readers.$round" 2>&1 || true
	ms=$(elapsed_ms "$t0")
	wait "$holders" || true
	check_eq "$(cat "$T/held.$round")" ok:300 "round $round: files the holders read to the end"
	if [ -s "$T/readers.$round" ]; then
		head -n 5 "$T/readers.$round" >&2
		fail "round $round: $(wc -l <"$T/readers.$round") reads failed or were empty"
	fi
	rss=$(rss_kib "$pid")
	round_rss+=("$rss")
	log "round $round: $npaths reads by 200 parallel readers in $ms ms, 300 handles held by 50 processes, all read; VmRSS now $rss KiB, $(threads_of "$pid") threads"
	alive "after round $round"
done
touch "$T/stop.sampler"
wait "$sampler" || true
read -r max_rss max_thr < <(awk '$1 > r { r = $1 } $2 > t { t = $2 } END { print r + 0, t + 0 }' "$T/samples")
log "samples: $(wc -l <"$T/samples"); VmRSS $rss0 KiB after warm-up, at most $max_rss KiB (+$((max_rss - rss0)) KiB), after the rounds ${round_rss[*]} KiB; threads $thr0 after warm-up, at most $max_thr"
[ "$max_thr" -le "$MAX_THREADS" ] || fail "the daemon had $max_thr threads (bound $MAX_THREADS)"
[ $((max_rss - rss0)) -le "$MAX_RSS_GROWTH_KIB" ] ||
	fail "VmRSS grew by $((max_rss - rss0)) KiB under load (bound $MAX_RSS_GROWTH_KIB KiB)"
[ $((round_rss[2] - round_rss[0])) -le "$MAX_ROUND_GROWTH_KIB" ] ||
	fail "VmRSS grew by $((round_rss[2] - round_rss[0])) KiB between round 1 and round 3 (bound $MAX_ROUND_GROWTH_KIB KiB): a leak?"
stop_e4infofs
log "ok"
