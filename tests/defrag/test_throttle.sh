#!/usr/bin/env bash
# A throttled job: "1 mibps=20" on 5 x 64 MiB of fragmented files with
# -o defrag_threads=4. Every 0.5 s the test samples the job's bytes_done
# (cat defrag) and the sectors written to the image's loop device
# (/sys/block/loopN/stat); over every 5 s window both stay within +10% of
# 20 MiB/s (the writes also carry the journal's), and the
# whole job's rate is consistent with the cap (bytes moved / seconds in
# [14, 22] MiB/s). While it runs, the job's moving threads are in the idle
# I/O class (ionice). Content stays intact.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
require_cmd ionice
setup_image 1024

mkdir -p "$SRC/t"
"$MKFRAG" frag "$SRC/t" f 5 61440 16      # 5 x 60 MiB, 3840 runs each
snap_before
runs_before=$(sum_runs "$SRC")
start_e4infofs -o defrag_threads=4
drop_caches
stat_file=/sys/block/$(basename "$LOOP")/stat
D=$MNT/defrag

( echo "1 mibps=20" >"$D" ) 2>"$T/w.err" &
writer=$!
t0=$(now_s)
: >"$T/samples"
classes=""
while kill -0 "$writer" 2>/dev/null; do
	st=$(cat "$D")
	if [ "$(sed -n 's/^state: //p' <<<"$st")" = running ]; then
		printf '%s %s %s\n' "$(now_s)" "$(sed -n 's/^bytes_done: //p' <<<"$st")" \
			"$(awk '{ print $7 }' "$stat_file")" >>"$T/samples"
	fi
	# The I/O class of the job's worker threads, once they run.
	if [ -z "$classes" ]; then
		classes=$(for task in /proc/"$DAEMON_PID"/task/*; do
			[ "$(cat "$task/comm")" = e4defrag ] && ionice -p "$(basename "$task")"
		done | sort -u | tr '\n' ' ') || true
	fi
	# Every 0.5 s, whatever the reads above took.
	ms=$(( $(elapsed_ms "$t0") % 500 ))
	sleep "0.$(printf '%03d' $((500 - ms)))"
done
total_ms=$(elapsed_ms "$t0")
wait "$writer" || fail "the throttled job failed: $(cat "$T/w.err")"
check_eq "$(dkey "$D" state)" done "state of the throttled job"
moved=$(dkey "$D" bytes_moved)
log "job: $moved bytes moved in $total_ms ms ($(awk -v b="$moved" -v ms="$total_ms" 'BEGIN { printf "%.2f", b / 1048576 / ms * 1000 }') MiB/s), $(wc -l <"$T/samples") samples; worker I/O class: $classes"
[[ $classes == idle* ]] && [[ $classes != *" "?* ]] || fail "job threads' I/O classes: '$classes' (expected idle)"

python3 - "$T/samples" "$moved" "$total_ms" <<'PY' || fail "throttle bound broken (see above)"
import sys
rows = [tuple(float(x) for x in l.split()) for l in open(sys.argv[1]) if len(l.split()) == 3]
moved, total_ms = int(sys.argv[2]), int(sys.argv[3])
MIB, cap = 1048576, 20.0
bad, worst_b, worst_s, n = [], 0.0, 0.0, 0
for i, (t, b, s) in enumerate(rows):
    # The first sample at least 5 s later: the window [t, t2], 5 s or a bit more.
    j = next((k for k in range(i + 1, len(rows)) if rows[k][0] - t >= 5.0), None)
    if j is None:
        break
    t2, b2, s2 = rows[j]
    secs = t2 - t
    rb = (b2 - b) / MIB / secs
    rs = (s2 - s) * 512 / MIB / secs
    n += 1
    worst_b, worst_s = max(worst_b, rb), max(worst_s, rs)
    if rb > cap * 1.10:
        bad.append(f"bytes_done {rb:.2f} MiB/s over [{t - rows[0][0]:.1f}, {t2 - rows[0][0]:.1f}] s")
    if rs > cap * 1.10:
        bad.append(f"sectors {rs:.2f} MiB/s over [{t - rows[0][0]:.1f}, {t2 - rows[0][0]:.1f}] s")
rate = moved / MIB / (total_ms / 1000)
print(f"[test_throttle] {n} windows of 5 s: bytes_done at most {worst_b:.2f} MiB/s, "
      f"sectors written at most {worst_s:.2f} MiB/s; whole job {rate:.2f} MiB/s", file=sys.stderr)
if n < 4:
    bad.append(f"only {n} windows: the job was too short")
if not 14 <= rate <= 22:
    bad.append(f"whole job {rate:.2f} MiB/s, not consistent with a 20 MiB/s cap")
for b in bad:
    print("[test_throttle] " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
stop_e4infofs
runs_after=$(sum_runs "$SRC")
log "runs $runs_before -> $runs_after"
[ "$runs_after" -lt $((runs_before / 100)) ] || fail "the throttled job left $runs_after runs of $runs_before"
check_snap "the throttled job"
log "ok"
