#!/usr/bin/env bash
# The second pass (docs/defrag.md): 3,000 small files interleaved on disk
# (the benchmarks' corpus a at 3%) with the free space cut into 32 KiB
# pieces ("swiss cheese"), so that first donors are fragmented too. On two
# copies of the image: e4defrag on A, an e4infofs subtree job on B. The job
# must retry files (retried > 0), leave no more runs than e4defrag, account
# for every file once, and change no content, timestamp or hole.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
require_cmd python3
setup_image 512

python3 "$(dirname "$0")/../bench/age.py" --corpus a --free cheese --scale 0.03 \
	--cheese-file "$SRC/cheese" "$SRC/tree" >"$T/age.json" || fail "age.py failed"
sync
drop_caches
"${FSNAP[@]}" snap "$SRC/tree" >"$T/snap.before"
runs_before=$(sum_runs "$SRC/tree")

SRC_B=$T/srcB
mount_copy_b "$SRC_B"

e4defrag "$SRC/tree" >"$T/e4defrag.out" 2>&1 || log "e4defrag exited with $?"
sync
runs_a=$(sum_runs "$SRC/tree")

MNT=$T/mnt
mount_e4infofs "$SRC_B" "$MNT"
export DAEMON_PID=$LAST_PID
echo 1 >"$MNT/tree/defrag" || fail "echo 1 > tree/defrag failed"
sync
runs_b=$(sum_runs "$SRC_B/tree")
status=$(cat "$MNT/tree/defrag")
log "runs before $runs_before, after e4defrag $runs_a, after e4infofs $runs_b; $(tr '\n' ' ' <<<"$status")"

check_eq "$(dkey "$MNT/tree/defrag" state)" done "job state"
check_eq "$(dkey "$MNT/tree/defrag" failed)" 0 "failed files"
retried=$(dkey "$MNT/tree/defrag" retried)
check "no file was retried: the first donors were all good, the test proves nothing" [ "$retried" -gt 0 ]
sum=0
for o in improved optimal no-gain skipped failed cancelled; do
	sum=$((sum + $(dkey "$MNT/tree/defrag" "$o")))
done
check_eq "$sum" "$(dkey "$MNT/tree/defrag" files)" "outcomes add up to the files"
check_eq "$(dkey "$MNT/tree/defrag" runs_after)" "$runs_b" "runs_after of the status vs filefrag"
check "e4infofs left more runs ($runs_b) than e4defrag ($runs_a)" [ "$runs_b" -le "$runs_a" ]

drop_caches
"${FSNAP[@]}" snap "$SRC_B/tree" >"$T/snap.b"
if ! cmp -s "$T/snap.b" "$T/snap.before"; then
	diff "$T/snap.before" "$T/snap.b" | head -n 10 >&2 || true
	fail "e4infofs changed content, timestamps or holes (above: < before, > after)"
fi
stop_e4infofs "$MNT"
log "ok"
