#!/usr/bin/env bash
# SIGKILL of the daemon at a random moment of a subtree job (once it has
# done 0 to 69% of its bytes, a random target per round: during the walk, a
# donor's allocation or a move; a time would not do, a job here takes well
# under a second), 4 rounds, the
# same mount point mounted again each time: after every round each file
# holds its content; after the last, e2fsck -fn is clean and no space leaked:
# once the source was unmounted and mounted again (orphans processed),
# free blocks + the files' blocks (extent trees included, they change when
# a file is partly moved) equal their value before the first round; and
# the mount point can be mounted again, where a job completes.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
setup_image 512
ROUNDS=4

mkdir -p "$SRC/d/sub" "$SRC/e"
"$MKFRAG" frag "$SRC/d" big 4 49152 16      # 4 x 48 MiB, 3072 runs each
"$MKFRAG" frag "$SRC/d/sub" m 8 4096 8      # 8 x 4 MiB, 512 runs each
"$MKFRAG" frag "$SRC/e" s 20 256 4          # 20 x 256 KiB, 64 runs each
sync
# check_content: every file holds its pattern.
check_content() {
	local i
	for i in 0 1 2 3; do check "$1: big$i content" "$MKFRAG" verify frag "$SRC/d/big$i" $i; done
	for i in 0 1 2 3 4 5 6 7; do check "$1: m$i content" "$MKFRAG" verify frag "$SRC/d/sub/m$i" $i; done
	for i in $(seq 0 19); do check "$1: s$i content" "$MKFRAG" verify frag "$SRC/e/s$i" "$i"; done
}
blocks_of_files() {
	find "$SRC" -xdev -type f -printf '%b\n' | awk -v bs="$(stat -f -c %S "$SRC")" '{ s += $1 * 512 / bs } END { print s }'
}
umount "$SRC"
free0=$(free_blocks "$LOOP")
mount "$LOOP" "$SRC"
files0=$(blocks_of_files)
runs0=$(sum_runs "$SRC")
log "before: free blocks $free0, files' blocks $files0, runs $runs0"

killed=0
T0=$(now_s)
for round in $(seq "$ROUNDS"); do
	start_e4infofs
	check_eq "$(dkey "$MNT/defrag" state)" idle "round $round: state in a new daemon"
	drop_caches
	( echo 1 >"$MNT/defrag" ) 2>"$T/job.$round.err" &
	job=$!
	wait_state "$MNT/defrag" running 10
	target=$((RANDOM % 70))
	pct=0
	for _ in $(seq 4000); do
		st=$(tr '\n' ' ' <"$MNT/defrag")
		[[ $st == "state: running"* ]] || break
		[ "$target" = 0 ] && break # during the walk, or the first donor
		# bytes_total is 0 until the walk has planned the job
		[[ $st =~ bytes_total:\ [1-9] ]] || continue
		[[ $st =~ percent:\ ([0-9]+) ]] && pct=${BASH_REMATCH[1]}
		[ "$pct" -ge "$target" ] && break
		sleep 0.002
	done
	if [[ $st == "state: running"* ]]; then
		killed=$((killed + 1))
	fi
	kill -KILL "$DAEMON_PID"
	forget_daemon "$DAEMON_PID"
	for _ in $(seq 100); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$job" 2>/dev/null && fail "round $round: the writer of defrag still blocks 10 s after the daemon died"
	rc=0
	wait "$job" || rc=$?
	_umount_fuse "$MNT"
	_is_mounted "$MNT" && fail "round $round: cannot unmount the dead FUSE mount"
	runs=$(sum_runs "$SRC")
	log "round $round ($(elapsed_ms "$T0") ms): killed at ${pct}% of the job (target ${target}%; $st); writer status $rc: $(cat "$T/job.$round.err"); runs now $runs"
	drop_caches
	check_content "round $round"
done
[ "$killed" -ge 2 ] || fail "only $killed of $ROUNDS kills came while the job ran"
runs_killed=$(sum_runs "$SRC")
[ "$runs_killed" -lt "$runs0" ] || fail "the killed jobs moved nothing (runs $runs0 -> $runs_killed): the test proves nothing"

umount "$SRC" || { sleep 1; umount "$SRC"; } || fail "cannot unmount $SRC after the kills"
out=$(e2fsck -fn "$LOOP" 2>&1) || { echo "$out" >&2; fail "e2fsck -fn after $ROUNDS kills found problems"; }
mount "$LOOP" "$SRC" || fail "cannot mount $SRC again"
files1=$(blocks_of_files)
umount "$SRC"
free1=$(free_blocks "$LOOP")
log "after $ROUNDS kills ($killed during the job): free blocks $free0 -> $free1, files' blocks $files0 -> $files1, runs $runs0 -> $runs_killed; e2fsck clean"
if [ $((free1 + files1)) != $((free0 + files0)) ]; then
	gd=$(dumpe2fs "$LOOP" 2>/dev/null | awk '/ free blocks, / { s += $1 } END { print s }')
	fail "free blocks + files' blocks after the kills: $((free1 + files1)), before $((free0 + files0)) (leaked donor blocks?); superblock free $free1, group descriptors' free $gd, e2fsck: $(e2fsck -fn "$LOOP" 2>&1 | tail -n 1)"
fi
mount "$LOOP" "$SRC" || fail "cannot mount $SRC again"

# The same mount point again; a job to the end.
start_e4infofs
drop_caches
echo 1 >"$MNT/defrag" || fail "a job after the kills failed: $(tr '\n' ' ' <"$MNT/defrag")"
log "final job ($(elapsed_ms "$T0") ms): $(tr '\n' ' ' <"$MNT/defrag")"
check_eq "$(dkey "$MNT/defrag" failed)" 0 "failed files in the final job"
drop_caches
check_content "after the final job"
stop_e4infofs
umount "$SRC"
out=$(e2fsck -fn "$LOOP" 2>&1) || { echo "$out" >&2; fail "e2fsck -fn after the final job found problems"; }
log "ok"
