#!/usr/bin/env bash
# Resume after a deadline, across a daemon restart: "1 seconds=2" on a tree
# that needs well over 2 s stops and leaves a state file in -o state_dir
# (written atomically: no temporary file is left); the daemon is unmounted
# and started again; "echo 1" then passes over the files the first job
# finished without examining them (status "resumed:", files + resumed =
# all), finishes, removes the state, and the two jobs together leave the
# runs one uninterrupted job leaves on a copy of the image (within the
# allocator's variance, as in defrag_deadline; the cost models, costs*,
# stay: they are not resume state). A damaged state file (a
# checksum that does not match, listing every file as finished) is
# ignored with a log line: that job examines every file.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
THREADS=4
setup_image 2048
STATE=$T/st

mkdir -p "$SRC/big" "$SRC/small"
"$MKFRAG" frag "$SRC/big" b 64 8192 4      # 64 x 8 MiB, 2048 runs each
"$MKFRAG" frag "$SRC/small" s 4 256 4      # 4 x 1 MiB, 64 runs each
snap_before
runs_before=$(sum_runs "$SRC/big")
mount_copy_b "$T/b"

# ---- the uninterrupted job on the copy: the reference ----------------------------
drop_caches
mount_e4infofs "$T/b" "$T/mb" -o defrag_threads="$THREADS" -o state_dir="$T/st-ref"
echo 1 >"$T/mb/big/defrag" || fail "the reference job failed"
check_eq "$(dkey "$T/mb/big/defrag" state)" done "state of the reference job"
stop_e4infofs "$T/mb"
runs_ref=$(sum_runs "$T/b/big")
check_eq "$(find "$T/st-ref" -type f ! -name costs ! -name 'costs-*' | wc -l)" 0 "state files after a job that went through"

# ---- a job stopped by its deadline, then the daemon restarted --------------------
start_e4infofs -o defrag_threads="$THREADS" -o state_dir="$STATE"
drop_caches
echo "1 seconds=2" >"$MNT/big/defrag" || fail "the job with a deadline failed"
check_eq "$(dkey "$MNT/big/defrag" state)" stopped "state after the deadline"
finished=$(($(dkey "$MNT/big/defrag" improved) + $(dkey "$MNT/big/defrag" optimal) +
	$(dkey "$MNT/big/defrag" no-gain) + $(dkey "$MNT/big/defrag" skipped)))
log "stopped: $(tr '\n' ' ' <"$MNT/big/defrag")"
[ "$finished" -ge 1 ] && [ "$finished" -lt 64 ] || fail "the stopped job finished $finished of 64 files: not a test of resuming"
stop_e4infofs
state_file=$(find "$STATE" -maxdepth 1 -type f -name 'resume-*')
[ -n "$state_file" ] || fail "no state file in $STATE after a stop ($(ls -A "$STATE"))"
check_eq "$(find "$STATE" -type f ! -name costs ! -name 'costs-*' | wc -l)" 1 "files in the state directory (no temporary left)"
check_eq "$(sed -n 's/^count //p' "$state_file")" "$finished" "files in the state file"
runs_mid=$(sum_runs "$SRC/big")

start_e4infofs -o defrag_threads="$THREADS" -o state_dir="$STATE"
echo 1 >"$MNT/big/defrag" || fail "the resumed job failed"
log "resumed: $(tr '\n' ' ' <"$MNT/big/defrag")"
check_eq "$(dkey "$MNT/big/defrag" state)" done "state of the resumed job"
check_eq "$(dkey "$MNT/big/defrag" resumed)" "$finished" "files passed over as finished"
check_eq "$(dkey "$MNT/big/defrag" files)" $((64 - finished)) "files the resumed job examined"
grep -q "resuming from resume-.*: $finished files finished before" "$T"/daemon*.log ||
	fail "no 'resuming' line in the daemon log"
check_eq "$(find "$STATE" -type f ! -name costs ! -name 'costs-*' | wc -l)" 0 "state files after the resumed job went through"
runs_after=$(sum_runs "$SRC/big")
log "runs: $runs_before, after the stop $runs_mid, after the resumed job $runs_after, uninterrupted $runs_ref"
slack=${RUNS_SLACK:-6}
[ "$runs_after" -le $((runs_ref + slack)) ] ||
	fail "stopped + resumed: $runs_after runs, uninterrupted: $runs_ref (allowed +$slack)"

# ---- a damaged state file is ignored ------------------------------------------------
fsid=$(basename "$state_file" | sed 's/^resume-\([0-9a-f]*\)-.*/\1/')
small_ino=$(stat -c %i "$SRC/small")
python3 - "$SRC/small" "$STATE/resume-$fsid-$small_ino" <<'PY'
import os, sys
d, out = sys.argv[1], sys.argv[2]
lines = []
for n in sorted(os.listdir(d)):
    st = os.stat(os.path.join(d, n))
    lines.append("%d %d %d\n" % (st.st_ino, st.st_size, st.st_mtime_ns))
with open(out, "w") as f:
    f.write("e4infofs-resume 1\ncount %d\n" % len(lines) + "".join(lines) + "sha256 " + "0" * 64 + "\n")
PY
echo 1 >"$MNT/small/defrag" || fail "the job on small failed"
check_eq "$(dkey "$MNT/small/defrag" resumed)" "" "resumed with a damaged state"
check_eq "$(dkey "$MNT/small/defrag" improved)" 4 "files improved with a damaged state"
grep -q "resume state resume-$fsid-$small_ino damaged: ignored" "$T"/daemon*.log ||
	fail "no 'damaged: ignored' line in the daemon log"
stop_e4infofs
check_snap "the jobs"
log "ok"
