#!/usr/bin/env bash
# Three writer processes overwrite random ranges of a 96 MiB file with
# ~24,000 extents (each in its own stripes) and one appends to it, with an
# fsync per batch, while a job defragments that file: after both end, the
# file holds exactly what the writers wrote over the original, the job
# succeeded and left the file nearly contiguous, and the writers did write
# while the job's state was "running" (the job is capped with mibps=32 so
# that it lasts long enough whatever the disk's speed).
# With the argument "dirty" the writers never sync and rewrite pages while
# they are still dirty (64 ranges per batch): the kernel refuses to move
# such pages (EBUSY) until they are written back and dropped.
set -euo pipefail
MODE=${1:-fsync}
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
setup_image 512

mkdir "$SRC/w"
"$MKFRAG" frag "$SRC/w" w 2 98304 4     # two 96 MiB files interleaved block by block
f=$SRC/w/w0
runs_before=$(filefrag_count "$f")
[ "$runs_before" -ge 20000 ] || fail "w0 has only $runs_before runs"
cp "$f" "$T/initial"
start_e4infofs
drop_caches

python3 "$(dirname "$0")/cwriter.py" "$f" "$T/initial" "$MNT/w/w0/defrag" "$T/ready" "$T/stop" \
	"$T/expected" 42 3 "$MODE" >"$T/writer.out" 2>"$T/writer.err" </dev/null &
writer=$!
for _ in $(seq 100); do [ -e "$T/ready" ] && break; sleep 0.1; done
[ -e "$T/ready" ] || fail "the writer did not start: $(cat "$T/writer.err")"

start=$(now_s)
# Capped at 32 MiB/s (3 s for 96 MiB): on a fast disk an uncapped job took
# 1.2 s and the writers barely overlapped it.
( echo "1 mibps=32" >"$MNT/w/w0/defrag" ) 2>"$T/job.err" &
job=$!
job_rc=0
wait "$job" || job_rc=$?
log "job took $(elapsed_ms "$start") ms, exit status $job_rc"
touch "$T/stop"
writer_rc=0
wait "$writer" || writer_rc=$?
[ "$writer_rc" = 0 ] || fail "the writer failed ($writer_rc): $(cat "$T/writer.err")"
log "writer: $(cat "$T/writer.out")"
log "status: $(tr '\n' ' ' <"$MNT/w/w0/defrag")"

[ "$job_rc" = 0 ] || fail "echo 1 > w/w0/defrag failed during concurrent writes: $(cat "$T/job.err")"
check_eq "$(dkey "$MNT/w/w0/defrag" state)" "done" "state"
check_eq "$(dkey "$MNT/w/w0/defrag" improved)" 1 "improved"
read -r _ batches _ overlapped _ <"$T/writer.out"
[ "$overlapped" -ge 3 ] ||
	fail "only $overlapped of $batches writer batches ran while the job was running: no real overlap"

drop_caches
if ! cmp "$f" "$T/expected" >&2; then
	fail "w0 differs from the writer's expected content"
fi
check_eq "$(stat -c %s "$f")" "$(stat -c %s "$T/expected")" "size of w0"
runs_after=$(filefrag_count "$f")
log "w0: $runs_before runs before, $runs_after after (with the appends)"
# The writes must not cost the move its result: a range that was moved and
# then moved again (e.g. a retry after EBUSY that ignores the blocks the
# failed call had moved) would swap the old blocks back in.
if [ "$runs_after" -gt 8 ]; then
	filefrag -v "$f" | awk 'NR > 3 && NR <= 10' >&2
	fail "w0: runs $runs_before -> $runs_after (the job reported runs_after $(dkey "$MNT/w/w0/defrag" runs_after), bytes_moved $(dkey "$MNT/w/w0/defrag" bytes_moved))"
fi
check "w1 content" "$MKFRAG" verify frag "$SRC/w/w1" 1

stop_e4infofs
umount "$SRC" || fail "umount $SRC failed"
out=$(e2fsck -fn "$LOOP" 2>&1) || { echo "$out" >&2; fail "e2fsck -fn found problems"; }
log "ok"
