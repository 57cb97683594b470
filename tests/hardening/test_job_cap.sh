#!/usr/bin/env bash
# A job answers its writer when it ends and holds one FUSE thread until
# then. With -o max_threads=4, at most 2 jobs run at once: a third, on a
# node that overlaps none, gets EBUSY (and a line in the log), and the
# mount keeps answering (lookups, reads, a cancel) while the two run. Without the cap, as many
# jobs as threads left nothing to answer anything, not even a cancel.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../defrag/common.sh"
source "$(dirname "$0")/common.sh"
require_root
setup_image 1024

for d in a b c; do
	mkdir -p "$SRC/$d"
	"$MKFRAG" frag "$SRC/$d" f 2 98304 16 # 2 x 96 MiB, 6144 runs each
done
sync
start_e4infofs -o max_threads=4
drop_caches
( echo 1 >"$MNT/a/defrag" ) 2>"$T/a.err" &
ja=$!
( echo 1 >"$MNT/b/defrag" ) 2>"$T/b.err" &
jb=$!
wait_moving "$MNT/a/defrag"
wait_moving "$MNT/b/defrag"
if out=$(trig 1 "$MNT/c/defrag" 2>&1); then
	fail "a third job started while two ran (max_threads=4)"
fi
[[ $out == *"Device or resource busy"* ]] || fail "the third job: expected EBUSY, got: $out"
grep -q "refused: 2 jobs run" "$T/daemon.log" || fail "no log line for the refused job"
check_eq "$(dkey "$MNT/a/defrag" state)" running "job a after the refusal"
# The mount answers while the two run.
timeout 10 stat "$MNT/c/f0" >/dev/null || fail "stat through the mount did not answer while two jobs ran"
timeout 10 cat "$MNT/c/f0/score" >/dev/null || fail "c/f0/score did not answer while two jobs ran"
timeout 10 sh -c "echo cancel >'$MNT/jobs'" || fail "cancel did not answer while two jobs ran"
declare -A pid=([a]=$ja [b]=$jb)
for d in a b; do
	rc=0
	wait "${pid[$d]}" || rc=$?
	[ "$rc" = 0 ] || grep -q "Operation canceled" "$T/$d.err" || fail "job $d: $(cat "$T/$d.err")"
done
# With them gone, c's job runs.
echo 1 >"$MNT/c/defrag" || fail "the job on c after the others ended"
check_eq "$(dkey "$MNT/c/defrag" improved)" 2 "c: improved"
for d in a b c; do
	for i in 0 1; do check "$d/f$i content" "$MKFRAG" verify frag "$SRC/$d/f$i" "$i"; done
done
stop_e4infofs
log "ok"
