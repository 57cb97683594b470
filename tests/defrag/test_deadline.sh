#!/usr/bin/env bash
# A job with a deadline: "1 seconds=2" on a tree that needs well over 2 s
# (12 x 64 MiB of 16384 runs each on a 2 GiB image, caches dropped) returns 0 (a deadline is
# no error) within 2 s plus one chunk's time at the rate an uninterrupted
# job measured on a copy of the image (plus 0.5 s of slack: the workers'
# join, the reply, the shell), shows "state: stopped" with what is left,
# keeps content, times and holes, and a following "echo 1" finishes the
# job: the runs then end where the uninterrupted job on the copy ended,
# within the allocator's variance (see the bound below).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
THREADS=4
# 4 KiB runs: the move's cost grows with the extents, so the job needs
# well over 2 s even when the disk is fast (with 16 KiB runs 512 MiB took
# 1.6 s at one time and 6.7 s for 384 MiB at another, under load).
setup_image 2048

mkdir -p "$SRC/big"
"$MKFRAG" frag "$SRC/big" b 12 65536 4     # 12 x 64 MiB, 16384 runs each
snap_before
runs_before=$(sum_runs "$SRC")
mount_copy_b "$T/b"

# ---- the uninterrupted job on the copy: the reference --------------------------
drop_caches
mount_e4infofs "$T/b" "$T/mb" -o defrag_threads="$THREADS"
t0=$(now_s)
echo 1 >"$T/mb/defrag" || fail "the reference job failed"
ref_ms=$(elapsed_ms "$t0")
ref_moved=$(dkey "$T/mb/defrag" bytes_moved)
check_eq "$(dkey "$T/mb/defrag" state)" done "state of the reference job"
stop_e4infofs "$T/mb"
runs_list "$T/b" >"$T/runs.ref"
runs_ref=$(sum_runs "$T/b")
[ "$ref_ms" -ge 3000 ] || fail "the uninterrupted job took $ref_ms ms: not well over 2 s (make the files bigger)"
# One 4 MiB chunk per worker (THREADS workers share the disk) at the rate seen.
chunk_ms=$((THREADS * 4194304 * ref_ms / ref_moved))
budget=$((2000 + chunk_ms + 500))
log "reference: $ref_ms ms, $ref_moved bytes moved, runs $runs_before -> $runs_ref; one chunk $chunk_ms ms, budget $budget ms"

# ---- the job with a deadline ----------------------------------------------------
start_e4infofs -o defrag_threads="$THREADS"
drop_caches
t0=$(now_s)
echo "1 seconds=2" >"$MNT/defrag" || fail "a job stopped by its deadline failed its writer"
ms=$(elapsed_ms "$t0")
status=$(tr '\n' ' ' <"$MNT/defrag")
log "deadline 2 s: the writer returned after $ms ms (overshoot $((ms - 2000)) ms, budget $budget ms): $status"
[ "$ms" -ge 2000 ] || fail "the job ended before its deadline ($ms ms): it had less than 2 s of work"
[ "$ms" -le "$budget" ] || fail "the job stopped $ms ms after its start, over the budget of $budget ms"
check_eq "$(dkey "$MNT/defrag" state)" stopped "state after the deadline"
done_files=$(dkey "$MNT/defrag" files_done)
total_files=$(dkey "$MNT/defrag" files_total)
left=$(dkey "$MNT/defrag" bytes_left)
moved=$(dkey "$MNT/defrag" bytes_moved)
# Files the deadline cut count as done (cancelled): with as many files
# started as threads, every one may be; something must be left to do.
[ "$done_files" -lt "$total_files" ] || [ "$(dkey "$MNT/defrag" cancelled)" -gt 0 ] ||
	fail "every file done ($done_files/$total_files), none cut, by a job that stopped"
[ "$left" -gt 0 ] || fail "bytes_left 0 after a stop"
[ "$moved" -gt 0 ] || fail "nothing moved in 2 s"
grep -q "defrag of inode [0-9]*: stopped" "$T"/daemon*.log || fail "no 'stopped' line in the daemon log"
check_snap "the stopped job"
runs_mid=$(sum_runs "$SRC")
[ "$runs_mid" -lt "$runs_before" ] || fail "the stopped job left $runs_mid runs of $runs_before: what it moved did not stay moved"

# ---- a following job finishes it -------------------------------------------------
echo 1 >"$MNT/defrag" || fail "the job after the stop failed"
check_eq "$(dkey "$MNT/defrag" state)" done "state of the job after the stop"
stop_e4infofs
runs_list "$SRC" >"$T/runs.after"
runs_after=$(sum_runs "$SRC")
log "runs: $runs_before, after the stop $runs_mid, after the second job $runs_after, uninterrupted $runs_ref"
log "per file (stopped+finished vs uninterrupted): $(join "$T/runs.after" "$T/runs.ref" | awk '{ printf "%s %s/%s, ", $1, $2, $3 }')"
# Variance: the allocator places donors in the free space the first job
# left, and the second job gives each partly moved file a whole new donor.
# On a 1 GiB image that space was tight: 11 and 146 runs against 6 (b5
# got a donor of 139 pieces). On this 2 GiB image, 3 runs of the test
# ended at 6 runs, the uninterrupted layout exactly; the slack allows one
# more run per file (12 files).
slack=${RUNS_SLACK:-12}
[ "$runs_after" -le $((runs_ref + slack)) ] ||
	fail "stopped + finished: $runs_after runs, uninterrupted: $runs_ref (allowed +$slack)"
check_snap "the jobs"
log "ok"
