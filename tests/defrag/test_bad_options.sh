#!/usr/bin/env bash
# Malformed job options: every one is refused with EINVAL, through "echo >"
# (O_TRUNC) and one write(2), with a log line saying what was wrong, and
# nothing moves (filefrag's runs and the content unchanged). A daemon
# given a bad -o defrag_seconds/defrag_mibps/defrag_min_runs does not
# start. A throttled job waiting for its turn stops within 1 s of a
# cancel or SIGINT. Then the good forms run: min_runs (files with fewer
# runs left alone) and a mount default overridden by the trigger.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
setup_image 256
HW=(python3 "$(dirname "$0")/../hardening/hw.py")

mkdir -p "$SRC/d"
"$MKFRAG" frag "$SRC/d" few 3 1024 16     # 64 runs each
"$MKFRAG" frag "$SRC/d" many 3 4096 16    # 256 runs each
snap_before

# ---- bad mount options: the daemon refuses to start ------------------------------
for opt in defrag_seconds=0 defrag_seconds=-1 defrag_mibps=inf defrag_mibps=abc \
	defrag_min_runs=0 defrag_min_runs=1.5 defrag_seconds=1e3 defrag_mibps=; do
	rc=0
	out=$(timeout 10 "$E4INFOFS" "$SRC" "$T/mnt" -f -o "$opt" 2>&1) || rc=$?
	[ "$rc" != 0 ] || fail "-o $opt: the daemon started"
	findmnt -n "$T/mnt" >/dev/null && fail "-o $opt: mounted"
	[[ $out == *"$opt"* ]] || fail "-o $opt: no message naming it: $out"
done
log "bad -o values refused: $out"

start_e4infofs -o defrag_min_runs=100000
D=$MNT/d/defrag
bad=(
	"1 bogus=1" "1 seconds" "1 seconds=" "1 =1" "1 seconds=abc" "1 seconds=0" "1 seconds=0.0"
	"1 seconds=-1" "1 seconds=+1" "1 seconds=inf" "1 seconds=nan" "1 mibps=Infinity" "1 seconds=1e3"
	"1 seconds=0x10" "1 seconds=5s" "1 seconds=1.2.3" "1 mibps=99999999999999999999"
	"1 seconds=1000000001" "1 min_runs=0" "1 min_runs=2.5" "1 min_runs=4294967296"
	"1 seconds=1 seconds=2" "1 mibps=5 min_runs=2 mibps=5" "0 seconds=1" "cancel mibps=5"
	"pack seconds=0" "1 seconds=1 " "1  " "1 SECONDS=1" "start,seconds=1"
	"1 seconds=10 mibps=10 min_runs=10 seconds=100000000000000000000000"
)
# One write(2) each, all through one open (a refused write leaves the offset at 0).
parts=()
want=()
for line in "${bad[@]}"; do
	parts+=("$line\n")
	want+=(EINVAL)
done
check_eq "$("${HW[@]}" write "$D" --trunc "${parts[@]}")" "${want[*]}" "one write(2) of each malformed line"
for line in "${bad[@]}"; do
	out=$( { echo "$line" >"$D"; } 2>&1) && fail "echo '$line' > defrag succeeded"
	[[ $out == *"Invalid argument"* ]] || fail "echo '$line' > defrag: expected EINVAL, got: $out"
done
# The same to the root's jobs file (a cancel with options) and a file's node.
check_eq "$("${HW[@]}" write "$MNT/jobs" --trunc 'cancel seconds=1\n')" EINVAL "jobs: cancel with an option"
check_eq "$("${HW[@]}" write "$MNT/d/many0/defrag" --trunc '1 mibps=0\n')" EINVAL "a file's defrag: mibps=0"
logs=$(grep -c "refused: " "$T/daemon.log" || true)
[ "$logs" -ge $((2 * ${#bad[@]})) ] || fail "$logs log lines for $((2 * ${#bad[@]})) refused writes"
log "${#bad[@]} malformed lines refused twice each; log: $(grep -m3 'refused: ' "$T/daemon.log" | sed 's/.*refused: //' | tr '\n' ';')"
check_eq "$(dkey "$D" state)" idle "state after the refused writes"
runs_list "$SRC" >"$T/runs.mid"
cmp -s "$T/runs.before" "$T/runs.mid" || fail "runs changed after refused writes: $(diff "$T/runs.before" "$T/runs.mid" | head -5)"

# ---- a throttled job waiting for its turn stops within 1 s ---------------------
# At 0.1 MiB/s the first 256 KiB chunk waits 2.5 s: a cancel (and Ctrl-C)
# must not wait for it.
stop_ms() { # PID: milliseconds until PID ends, at most 3000
	local t0 i
	t0=$(now_s)
	for ((i = 0; i < 300; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.01
	done
	elapsed_ms "$t0"
}
( echo "1 mibps=0.1 min_runs=1" >"$D" ) 2>"$T/slow.err" &
job=$!
wait_state "$D" running 10
sleep 0.5
echo cancel 1<>"$D"
ms=$(stop_ms "$job")
wait "$job" && fail "the cancelled throttled job's writer succeeded"
grep -q "Operation canceled" "$T/slow.err" || fail "cancelled throttled job: $(cat "$T/slow.err")"
[ "$ms" -le 1000 ] || fail "a throttled job stopped $ms ms after its cancel"
log "throttled job waiting for its turn: cancelled in $ms ms"
env --default-signal=INT bash -c 'echo "1 mibps=0.1 min_runs=1" >"$1"' _ "$D" 2>/dev/null </dev/null &
job=$!
wait_state "$D" running 10
sleep 0.5
kill -INT "$job"
ms=$(stop_ms "$job")
wait "$job" && fail "the interrupted throttled job's writer succeeded"
[ "$ms" -le 1000 ] || fail "a throttled job stopped $ms ms after SIGINT"
log "throttled job waiting for its turn: SIGINT in $ms ms"
runs_list "$SRC" >"$T/runs.mid"
cmp -s "$T/runs.before" "$T/runs.mid" || fail "the stopped throttled jobs moved something before their turn"

# ---- good forms -----------------------------------------------------------------
# The mount's min_runs (100000) leaves everything alone...
echo 1 >"$D" || fail "echo 1 under defrag_min_runs=100000 failed"
check_eq "$(dkey "$D" improved)" 0 "improved under the mount's min_runs=100000"
runs_list "$SRC" >"$T/runs.mid"
cmp -s "$T/runs.before" "$T/runs.mid" || fail "the mount's min_runs=100000 let files move"
# ...the trigger's overrides it: the 256-run files move, the 64-run ones stay.
echo "1 min_runs=100 seconds=60 mibps=500" >"$D" || fail "echo '1 min_runs=100 seconds=60 mibps=500' failed"
check_eq "$(dkey "$D" state)" done "state of the min_runs job"
check_eq "$(dkey "$D" improved)" 3 "improved with min_runs=100"
runs_list "$SRC" >"$T/runs.after"
log "min_runs=100: $(tr '\n' ' ' <"$T/runs.after")"
join "$T/runs.before" "$T/runs.after" | awk '
	$1 ~ /few/ && $3 != $2 { print "moved " $0; bad = 1 }
	$1 ~ /many/ && $3 >= $2 { print "not moved " $0; bad = 1 }
	END { exit bad }' || fail "min_runs=100 did not pick the files with 100 runs or more"
stop_e4infofs
check_snap "the jobs"
log "ok"
