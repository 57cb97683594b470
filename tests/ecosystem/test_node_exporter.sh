#!/usr/bin/env bash
# Prometheus through prometheus-node-exporter's textfile collector, as
# docs/ecosystem.md sets it up: examples/node-exporter.sh copies the root's
# `metrics` into the collector's directory as e4infofs.prom; node_exporter
# (on 127.0.0.1, a free port, every collector but textfile disabled) serves
# it; the scrape parses (node_textfile_scrape_error 0) and its e4infofs_*
# samples equal `score` and the stats files of the root and of every
# top-level directory (odd names included); the metrics file has the
# labels of the spec (gauges: source, dir; counters: none but outcome); a
# second mount exported beside it does not clash (node-exporter.sh labels
# the counters with their source); the defrag counters follow a job;
# node-exporter.sh's loop refreshes the copy and removes it when the mount
# goes away. Loopback only.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
HERE=$(cd "$(dirname "$0")" && pwd)
EXAMPLES=$(cd "$HERE/../../examples" && pwd)

NE=$(command -v prometheus-node-exporter || command -v node_exporter || true)
if [ -z "$NE" ]; then
	log "installing prometheus-node-exporter"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus-node-exporter >/dev/null 2>&1 ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus-node-exporter >/dev/null; } ||
		fail "cannot install prometheus-node-exporter"
	NE=$(command -v prometheus-node-exporter) || fail "prometheus-node-exporter is not in PATH after installing it"
fi
require_cmd curl

setup_image 128
mkdir -p "$SRC/a/deep" "$SRC/b" "$SRC/contig" "$SRC/empty"
"$MKFRAG" frag "$SRC/a" f 3 512 8
"$MKFRAG" frag "$SRC/a/deep" g 2 256 4
"$MKFRAG" frag "$SRC/b" h 2 1024 64
"$MKFRAG" frag "$SRC/contig" c 1 2048 2048
"$MKFRAG" frag "$SRC" top 2 128 4          # files at the top: no dir label
for name in 'sp ace' 'q"uote' 'back\slash' $'new\nline' 'score'; do
	mkdir "$SRC/$name"
	"$MKFRAG" frag "$SRC/$name" x 2 64 4
done
sync
start_e4infofs

TEXTDIR=$T/textfile
mkdir "$TEXTDIR"

# ---- node_exporter on a free loopback port ------------------------------------------
NE_PID=""
PORT=""
for _ in 1 2 3 4 5; do
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$NE" --web.listen-address="127.0.0.1:$PORT" --collector.disable-defaults \
		--collector.textfile --collector.textfile.directory="$TEXTDIR" >"$T/node_exporter.log" 2>&1 &
	NE_PID=$!
	on_cleanup "kill $NE_PID; wait $NE_PID"
	for _ in $(seq 50); do
		curl -fsS "http://127.0.0.1:$PORT/metrics" -o /dev/null 2>/dev/null && break 2
		kill -0 "$NE_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill "$NE_PID" 2>/dev/null || true
	wait "$NE_PID" 2>/dev/null || true
	NE_PID=""
done
[ -n "$NE_PID" ] || fail "node_exporter did not start: $(tail -n 5 "$T/node_exporter.log")"
log "node_exporter $("$NE" --version 2>&1 | head -n 1 | awk '{print $3}') on 127.0.0.1:$PORT"

scrape() {
	curl -fsS --max-time 10 "http://127.0.0.1:$PORT/metrics" -o "$T/scrape.txt" || fail "scrape of 127.0.0.1:$PORT failed"
}

# ---- one copy, scrape, compare ---------------------------------------------------------
"$EXAMPLES/node-exporter.sh" -1 "$MNT" "$TEXTDIR" || fail "node-exporter.sh -1 failed"
[ -s "$TEXTDIR/e4infofs.prom" ] || fail "node-exporter.sh wrote no $TEXTDIR/e4infofs.prom"
check_eq "$(ls -A "$TEXTDIR")" e4infofs.prom "files in the textfile directory"
# Same content as the metrics file (scan counters and the node count may
# move between two reads; the daemon's own gauges, e4infofs_nodes,
# e4infofs_cache_bytes, e4infofs_scan_* and e4infofs_autodefrag_*, get the
# source label in the copy).
OWN='_total|e4infofs_nodes|e4infofs_cache_bytes|e4infofs_scan_|e4infofs_autodefrag'
diff <(grep -vE "$OWN" "$TEXTDIR/e4infofs.prom") <(grep -vE "$OWN" "$MNT/metrics") >/dev/null ||
	fail "e4infofs.prom differs from metrics: $(diff <(cat "$TEXTDIR/e4infofs.prom") <(cat "$MNT/metrics"))"
scrape
python3 "$HERE/prom_check.py" "$T/scrape.txt" "$MNT" "$SRC" "$TEXTDIR/e4infofs.prom" >"$T/counters.0" ||
	fail "scrape does not match the mount (above); scrape: $(grep -E '^(e4infofs|node_textfile)' "$T/scrape.txt")"

# The metrics file itself: counters (and the daemon's gauges: the mount's
# node count, the cache, a scan's progress, autodefrag's state) without source and dir labels (only
# outcome or reason), the per-directory gauges with both.
grep -E '^e4infofs_[a-z_]+_total' "$MNT/metrics" | grep -vE '^e4infofs_[a-z_]+_total(\{(outcome|reason)="[a-z_-]+"\})? [0-9.]+$' &&
	fail "counters with other labels in metrics"
grep -q '^e4infofs_nodes [0-9]*$' "$MNT/metrics" || fail "no e4infofs_nodes gauge without labels in metrics"
grep -q '^e4infofs_autodefrag_enabled 0$' "$MNT/metrics" || fail "no e4infofs_autodefrag_enabled 0 in metrics"
grep -q '^e4infofs_scan_running 0$' "$MNT/metrics" || fail "no e4infofs_scan_running 0 in metrics"
grep -E '^e4infofs_' "$MNT/metrics" | grep -vE '_total|^e4infofs_nodes |^e4infofs_cache_bytes |^e4infofs_scan_(running|elapsed_seconds|files|dirs) |^e4infofs_autodefrag_(enabled|queue) ' | grep -vE '^e4infofs_[a-z_]+\{source="[^"]*",dir="([^"\\]|\\.)*"\} [0-9.]+$' &&
	fail "gauges without source and dir labels in metrics"

# ---- a second mount on the same node_exporter: no clash ----------------------------------
mount_e4infofs "$SRC/a" "$T/mnt-a"
"$EXAMPLES/node-exporter.sh" -1 "$T/mnt-a" "$TEXTDIR" e4infofs-a || fail "node-exporter.sh -1 of the second mount failed"
scrape
python3 "$HERE/prom_check.py" "$T/scrape.txt" "$T/mnt-a" "$SRC/a" "$TEXTDIR/e4infofs-a.prom" >/dev/null ||
	fail "scrape with two mounts does not match the second mount (above)"
python3 "$HERE/prom_check.py" "$T/scrape.txt" "$MNT" "$SRC" "$TEXTDIR/e4infofs.prom" >/dev/null ||
	fail "scrape with two mounts does not match the first mount (above)"
grep -q 'error gathering' "$T/node_exporter.log" && fail "node_exporter: $(grep -m 1 'error gathering' "$T/node_exporter.log")"
stop_e4infofs "$T/mnt-a"
rm "$TEXTDIR/e4infofs-a.prom"

# ---- the defrag counters follow a job ------------------------------------------------------
val() { awk -v s="$1" '{ i = index($0, " "); while (substr($0, i + 1) ~ / /) i += index(substr($0, i + 1), " "); if (substr($0, 1, i - 1) == s) print substr($0, i + 1) }' "$2"; }
echo 1 >"$MNT/a/defrag" || fail "echo 1 > a/defrag failed: $(cat "$MNT/a/defrag")"
status=$(cat "$MNT/a/defrag")
improved=$(sed -n 's/^improved: //p' <<<"$status")
moved=$(sed -n 's/^bytes_moved: //p' <<<"$status")
[ "$improved" -gt 0 ] || fail "the job on a/ improved nothing: $status"
"$EXAMPLES/node-exporter.sh" -1 "$MNT" "$TEXTDIR" || fail "node-exporter.sh -1 failed (2)"
scrape
python3 "$HERE/prom_check.py" "$T/scrape.txt" "$MNT" "$SRC" "$TEXTDIR/e4infofs.prom" >"$T/counters.1" || fail "scrape after the job does not match the mount (above)"
jobs0=$(val e4infofs_defrag_jobs_total "$T/counters.0")
jobs1=$(val e4infofs_defrag_jobs_total "$T/counters.1")
check_eq "$jobs1" "$((jobs0 + 1))" "e4infofs_defrag_jobs_total after one job"
imp0=$(val 'e4infofs_defrag_files_total{outcome="improved"}' "$T/counters.0")
imp1=$(val 'e4infofs_defrag_files_total{outcome="improved"}' "$T/counters.1")
check_eq "$((imp1 - imp0))" "$improved" "improved files counted"
b0=$(val e4infofs_defrag_bytes_moved_total "$T/counters.0")
b1=$(val e4infofs_defrag_bytes_moved_total "$T/counters.1")
check_eq "$((b1 - b0))" "$moved" "bytes moved counted"
for o in optimal no-gain skipped failed cancelled; do
	n=$(sed -n "s/^$o: //p" <<<"$status")
	v0=$(val "e4infofs_defrag_files_total{outcome=\"$o\"}" "$T/counters.0")
	v1=$(val "e4infofs_defrag_files_total{outcome=\"$o\"}" "$T/counters.1")
	check_eq "$((v1 - v0))" "$n" "$o files counted"
done
s1=$(val e4infofs_defrag_seconds_total "$T/counters.1")
python3 -c "import sys; sys.exit(0 if float('$s1') > 0 else 1)" || fail "e4infofs_defrag_seconds_total is $s1 after a job"
inspections=$(val e4infofs_inspections_total "$T/counters.1")
[ "${inspections%.*}" -gt 0 ] || fail "e4infofs_inspections_total is $inspections"

# ---- node-exporter.sh's loop: refreshes, and removes the copy with the mount ------------
rm -f "$TEXTDIR/e4infofs.prom"
"$EXAMPLES/node-exporter.sh" -i 0.3 "$MNT" "$TEXTDIR" prod-home >"$T/loop.log" 2>&1 &
LOOP_PID=$!
on_cleanup "kill $LOOP_PID; wait $LOOP_PID"
for _ in $(seq 50); do [ -s "$TEXTDIR/prod-home.prom" ] && break; sleep 0.1; done
[ -s "$TEXTDIR/prod-home.prom" ] || fail "the loop wrote no prod-home.prom: $(cat "$T/loop.log")"
before=$(grep '^e4infofs_score{.*dir="b"}' "$TEXTDIR/prod-home.prom")
echo 1 >"$MNT/b/defrag" || fail "echo 1 > b/defrag failed"
after=$before
for _ in $(seq 50); do
	after=$(grep '^e4infofs_score{.*dir="b"}' "$TEXTDIR/prod-home.prom" || true)
	[ "$after" != "$before" ] && break
	sleep 0.1
done
[ "$after" != "$before" ] || fail "the loop did not refresh the score of b after its defrag ($before)"
scrape
grep -q '^node_textfile_scrape_error 0$' "$T/scrape.txt" || fail "node_exporter cannot parse the loop's copy"
stop_e4infofs
for _ in $(seq 50); do [ -e "$TEXTDIR/prod-home.prom" ] || break; sleep 0.1; done
[ ! -e "$TEXTDIR/prod-home.prom" ] || fail "prod-home.prom still there after the unmount"
kill -0 "$LOOP_PID" || fail "the loop exited when the mount went away: $(cat "$T/loop.log")"
kill "$LOOP_PID"
wait "$LOOP_PID" 2>/dev/null || true
check_eq "$(ls -A "$TEXTDIR")" "" "textfile directory after the loop (temporary files left?)"
log "ok"
