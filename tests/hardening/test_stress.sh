#!/usr/bin/env bash
# Bounded stress (E4INFO_STRESS_SECONDS, default 30): at the same time
# - 3 writers (swriter.py) create, append, overwrite, truncate, punch,
#   preallocate, rename and delete files in w/w0, w/w1, w/w2, fragmenting
#   each other, and keep the content they expect;
# - 2 readers (sreader.py) walk the mount and read every attribute file
#   type (score, stats, stats.json, extents, report, defrag, jobs, metrics),
#   checking their form;
# - 2 loops start jobs ("echo 1 1<> defrag") on overlapping nodes (the
#   root, w, w/w0, static, static/a, a file, ...): success, EBUSY or
#   ECANCELED;
# - a loop cancels at random ("echo cancel > jobs", "echo cancel 1<> defrag");
# - a probe reads the root's score every second (it must answer).
# Afterwards every file holds exactly what its writer last wrote (checked
# through the page cache, then again after the source is unmounted,
# e2fsck'ed clean and mounted), the static fragmented files are intact, and
# the daemon answers and exits cleanly at unmount.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
SECS=${E4INFO_STRESS_SECONDS:-30}
setup_image 768

mkdir -p "$SRC/static/a" "$SRC/static/b" "$SRC/w/w0/sub" "$SRC/w/w1/sub" "$SRC/w/w2/sub"
"$MKFRAG" frag "$SRC/static/a" a 6 4096 16     # 6 x 4 MiB, 256 runs each
"$MKFRAG" frag "$SRC/static/b" b 3 16384 16    # 3 x 16 MiB, 1024 runs each
sync
start_e4infofs
NODES=("" w w/w0 w/w1 w/w2 w/w0/sub static static/a static/b static/b/b0 static/a/a1)
log "stress for $SECS s"

# ---- the actors ---------------------------------------------------------------
writers=()
for k in 0 1 2; do
	python3 "$_HARD_DIR/swriter.py" run "$SRC/w/w$k" "$((k + 7))" "$SECS" "$T/manifest.$k" \
		>"$T/writer.$k" 2>&1 &
	writers+=($!)
done
readers=()
for k in 0 1; do
	python3 "$_HARD_DIR/sreader.py" "$MNT" "$SECS" "$k" >"$T/reader.$k" 2>&1 &
	readers+=($!)
done

job_loop() {
	local id=$1 ok=0 busy=0 canc=0 eio=0 n=0 node out
	while [ ! -e "$T/stop" ]; do
		node=${NODES[RANDOM % ${#NODES[@]}]}
		n=$((n + 1))
		if out=$( { trig 1 "$MNT/${node:+$node/}defrag"; } 2>&1); then
			ok=$((ok + 1))
		else
			case $out in
			*"Device or resource busy"*) busy=$((busy + 1)) ;;
			*"Operation canceled"*) canc=$((canc + 1)) ;;
			*"Input/output error"*) eio=$((eio + 1)) ;;
			*) echo "/$node: $out" >>"$T/jobs.other" ;;
			esac
		fi
		sleep 0.$((RANDOM % 3))
	done
	echo "$n $ok $busy $canc $eio" >"$T/jobloop.$id"
}
job_loop 0 &
jl0=$!
job_loop 1 &
jl1=$!

canceller() {
	local n=0 node out
	while [ ! -e "$T/stop" ]; do
		sleep "$((RANDOM % 2)).$((RANDOM % 10))"
		if ((RANDOM % 2)); then
			out=$( { echo cancel >"$MNT/jobs"; } 2>&1) || echo "jobs: $out" >>"$T/cancel.err"
		else
			node=${NODES[RANDOM % ${#NODES[@]}]}
			out=$( { trig cancel "$MNT/${node:+$node/}defrag"; } 2>&1) || echo "/$node: $out" >>"$T/cancel.err"
		fi
		n=$((n + 1))
	done
	echo "$n" >"$T/cancels"
}
canceller &
canc_pid=$!

prober() {
	local t0 out max=0 n=0 ms
	while [ ! -e "$T/stop" ]; do
		t0=$(now_s)
		if ! out=$(timeout 15 cat "$MNT/score" 2>&1) || ! [[ $out =~ ^[0-9]+$ ]]; then
			echo "cat score: '$out' after $(elapsed_ms "$t0") ms" >>"$T/probe.err"
		fi
		ms=$(elapsed_ms "$t0")
		[ "$ms" -gt "$max" ] && max=$ms
		n=$((n + 1))
		sleep 1
	done
	echo "$n $max" >"$T/probe"
}
prober &
probe_pid=$!

# ---- the end ------------------------------------------------------------------
wrc=0
for p in "${writers[@]}"; do wait "$p" || wrc=1; done
[ "$wrc" = 0 ] || fail "a writer failed: $(cat "$T"/writer.*)"
rrc=0
for p in "${readers[@]}"; do wait "$p" || rrc=1; done
touch "$T/stop"
echo cancel >"$MNT/jobs" || fail "the final cancel failed"
for p in $jl0 $jl1 $canc_pid $probe_pid; do wait "$p" || true; done
for k in 0 1 2; do log "writer $k: $(cat "$T/writer.$k")"; done
for k in 0 1; do log "reader $k: $(head -n 1 "$T/reader.$k")"; done
read -r n0 ok0 busy0 canc0 eio0 <"$T/jobloop.0"
read -r n1 ok1 busy1 canc1 eio1 <"$T/jobloop.1"
read -r probes probe_max <"$T/probe"
log "jobs started: $((n0 + n1)): $((ok0 + ok1)) succeeded, $((busy0 + busy1)) EBUSY, $((canc0 + canc1)) ECANCELED, $((eio0 + eio1)) EIO; cancels sent: $(cat "$T/cancels")"
log "daemon log: $(grep -c 'defrag of inode' "$T/daemon.log" || true) jobs ended, $(grep -o '[0-9]* improved' "$T/daemon.log" | awk '{ s += $1 } END { print s + 0 }') files improved"
log "score probe: $probes reads, slowest $probe_max ms"
[ "$rrc" = 0 ] || fail "a reader saw an unexpected error or malformed content: $(grep -h BAD "$T"/reader.* | head -n 5)"
[ ! -s "$T/probe.err" ] || fail "cat score failed during the stress: $(head -n 3 "$T/probe.err")"
[ ! -s "$T/cancel.err" ] || fail "cancel writes failed: $(head -n 3 "$T/cancel.err")"
[ ! -s "$T/jobs.other" ] || fail "jobs ended with an unexpected error: $(head -n 3 "$T/jobs.other")"
# EIO: a file failed. The failures allowed are those of files that a writer
# deleted between the job's walk and its move (ESTALE or ENOENT) or
# truncated during the move (EINVAL from EXT4_IOC_MOVE_EXT once the range
# is past EOF); they are logged as "e4infofs: defrag PATH: ERROR".
grep -E '^e4infofs: defrag .*: ' "$T/daemon.log" | grep -v '^e4infofs: defrag of inode' >"$T/file.errors" || true
log "files failed in jobs: $(wc -l <"$T/file.errors") ($(sed 's/.*: //' "$T/file.errors" | sort | uniq -c | tr -s ' \n' ' '))"
bad=$(grep -vE ': (Stale file handle|No such file or directory|Invalid argument)$' "$T/file.errors" | head -n 5 || true)
[ -z "$bad" ] || fail "files failed in jobs for another reason than being deleted or truncated: $bad"
[ $((ok0 + ok1)) -gt 0 ] || fail "no job succeeded"

alive "after the stress"
check_eq "$(tail -n +2 "$MNT/jobs")" "" "jobs still running after the stress"
for k in 0 1 2; do
	out=$(python3 "$_HARD_DIR/swriter.py" check "$SRC/w/w$k" "$T/manifest.$k") ||
		fail "writer $k's files differ from what it wrote: $(head -n 5 <<<"$out")"
done
stop_e4infofs
umount "$SRC" || fail "umount $SRC failed"
out=$(e2fsck -fn "$LOOP" 2>&1) || { echo "$out" >&2; fail "e2fsck -fn found problems after the stress"; }
mount "$LOOP" "$SRC" || fail "cannot mount $SRC again"
for k in 0 1 2; do
	out=$(python3 "$_HARD_DIR/swriter.py" check "$SRC/w/w$k" "$T/manifest.$k") ||
		fail "after remount, writer $k's files differ from what it wrote: $(head -n 5 <<<"$out")"
	log "writer $k: $out (after remount)"
done
for i in 0 1 2 3 4 5; do check "static a$i" "$MKFRAG" verify frag "$SRC/static/a/a$i" "$i"; done
for i in 0 1 2; do check "static b$i" "$MKFRAG" verify frag "$SRC/static/b/b$i" "$i"; done
log "ok"
