#!/usr/bin/env bash
# The scripts of examples/ on a real mount: worst-dirs.sh lists the
# directories with the highest scores (one level and deeper), as the
# score files give them; filemanager.sh (and the one-liner in its header)
# lists the scores of a directory's entries, sorted; defrag-high.sh -n
# changes nothing, defrag-high.sh defragments exactly the top-level
# directories above the threshold (55 or given), leaves the others and the
# top-level files alone, and reports a failure (read-only filesystem) with
# exit status 1; the line of cron.example (paths substituted) runs it and
# its flock keeps two runs from overlapping.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
HERE=$(cd "$(dirname "$0")" && pwd)
EX=$(cd "$HERE/../../examples" && pwd)

setup_image 128
mkdir -p "$SRC/hot1/sub/deeper" "$SRC/hot2" "$SRC/warm" "$SRC/cold/sub" "$SRC/empty" "$SRC/sp ace" "$SRC/score"
"$MKFRAG" frag "$SRC/hot1" f 2 1024 4
"$MKFRAG" frag "$SRC/hot1/sub/deeper" d 2 256 2
"$MKFRAG" frag "$SRC/hot2" g 3 512 4
"$MKFRAG" frag "$SRC/warm" w 2 1024 16
"$MKFRAG" frag "$SRC/cold" c 1 2048 2048
"$MKFRAG" frag "$SRC/cold/sub" cs 2 512 8
"$MKFRAG" frag "$SRC/sp ace" s 3 512 4
"$MKFRAG" frag "$SRC/score" r 1 256 256
"$MKFRAG" frag "$SRC" top 2 512 4      # top-level files: never defragmented by defrag-high.sh
sync
start_e4infofs

# runs_of NODE: physical runs of a mirror node (its stats).
runs_of() { stat_key "$MNT/$1/stats" runs; }
score_of() { cat "$MNT/$1/score"; }
TOPDIRS=(hot1 hot2 warm cold empty "sp ace" @score)
declare -A SCORE
for d in "${TOPDIRS[@]}"; do SCORE[$d]=$(score_of "$d"); done
log "scores: $(for d in "${TOPDIRS[@]}"; do printf '%s=%s ' "$d" "${SCORE[$d]}"; done)"
[ "${SCORE[hot1]}" -gt 55 ] && [ "${SCORE[hot2]}" -gt 55 ] && [ "${SCORE[sp ace]}" -gt 55 ] ||
	fail "the hot directories do not score above 55"
[ "${SCORE[warm]}" -gt 20 ] && [ "${SCORE[warm]}" -le 55 ] || fail "warm/ scores ${SCORE[warm]}, not in 21..55"
[ "${SCORE[cold]}" -le 55 ] || fail "cold/ scores ${SCORE[cold]}"

# ---- worst-dirs.sh ---------------------------------------------------------------------------------
# expected_worst N PATHS...: "score files fragmented_files runs layout_score path", sorted as the script sorts.
expected_worst() {
	local n=$1 p
	shift
	# Ties in the order of the walk: names sorted, parents before children.
	printf '%s\n' "$@" | LC_ALL=C sort | while IFS= read -r p; do
		printf '%s %s %s %s %s %s\n' "$(stat_key "$MNT/$p/stats" score)" "$(stat_key "$MNT/$p/stats" files)" \
			"$(stat_key "$MNT/$p/stats" fragmented_files)" "$(stat_key "$MNT/$p/stats" runs)" \
			"$(stat_key "$MNT/$p/stats" layout_score)" "$p"
	done | sort -s -k1,1nr | awk -v n="$n" 'n == 0 || NR <= n'
}
out=$("$EX/worst-dirs.sh" "$MNT" 3) || fail "worst-dirs.sh $MNT 3 failed"
check_eq "$(head -n 1 <<<"$out")" "# score files fragmented_files runs layout_score path" "worst-dirs.sh header"
# (The mirror shows the real directory "score" as @score; worst-dirs.sh prints mirror names.)
exp=$(expected_worst 3 "${TOPDIRS[@]}")
check_eq "$(tail -n +2 <<<"$out")" "$exp" "worst-dirs.sh $MNT 3"
check_eq "$(tail -n +2 <<<"$out" | awk '{print $1}' | tr '\n' ' ')" \
	"$(for d in "${TOPDIRS[@]}"; do echo "${SCORE[$d]}"; done | sort -rn | head -n 3 | tr '\n' ' ')" "top 3 scores"
out=$("$EX/worst-dirs.sh" -d 3 "$MNT" 0) || fail "worst-dirs.sh -d 3 failed"
check_eq "$(tail -n +2 <<<"$out" | wc -l)" 10 "directories down to depth 3"
exp=$(expected_worst 0 "${TOPDIRS[@]}" hot1/sub hot1/sub/deeper cold/sub)
check_eq "$(tail -n +2 <<<"$out")" "$exp" "worst-dirs.sh -d 3 $MNT 0"
out=$("$EX/worst-dirs.sh" -d 1 "$MNT/hot1") || fail "worst-dirs.sh on a subdirectory failed"
check_eq "$(tail -n +2 <<<"$out" | awk '{print $1, $6}')" "$(score_of hot1/sub) sub" "worst-dirs.sh inside hot1/"
rc=0
"$EX/worst-dirs.sh" "$SRC" >/dev/null 2>&1 || rc=$?
check_eq "$rc" 2 "worst-dirs.sh on a directory that is not a mount"

# ---- filemanager.sh and its one-liner ------------------------------------------------------------------
out=$(cd "$MNT" && "$EX/filemanager.sh") || fail "filemanager.sh failed"
exp=$(
	for d in "${TOPDIRS[@]}"; do printf '%s\t%s/\n' "${SCORE[$d]}" "$d"; done
	for f in top0 top1; do printf '%s\t%s\n' "$(score_of "$f")" "$f"; done
)
exp=$(LC_ALL=C sort -t "$(printf '\t')" -k1,1nr -k2,2 <<<"$exp")
check_eq "$out" "$exp" "filemanager.sh at the root"
check_eq "$("$EX/filemanager.sh" "$MNT/hot1")" "$(printf '%s\tsub/\n' "$(score_of hot1/sub)"; for f in f0 f1; do printf '%s\t%s\n' "$(score_of "hot1/$f")" "$f"; done | LC_ALL=C sort -t "$(printf '\t')" -k1,1nr -k2,2)" \
	"filemanager.sh hot1"
oneliner=$(sed -n 's/^#   \(for e in .*\)$/\1/p' "$EX/filemanager.sh")
[ -n "$oneliner" ] || fail "no one-liner in the header of filemanager.sh"
out=$(cd "$MNT" && bash -c "$oneliner") || fail "the one-liner failed: $oneliner"
# (In the mount every entry is a directory, files too: the one-liner lists both.)
check_eq "$(cut -f1 <<<"$out" | tr '\n' ' ')" "$(cut -f1 <<<"$exp" | sort -rn | tr '\n' ' ')" "scores of the one-liner"
check_eq "$(wc -l <<<"$out")" "$(wc -l <<<"$exp")" "lines of the one-liner"

# ---- defrag-high.sh -n: nothing moves -------------------------------------------------------------------
declare -A RUNS
for d in "${TOPDIRS[@]}" top0 top1; do RUNS[$d]=$(runs_of "$d"); done
out=$("$EX/defrag-high.sh" -n "$MNT") || fail "defrag-high.sh -n failed: $out"
for d in hot1 hot2 "sp ace" ; do
	grep -qxF "$d: score ${SCORE[$d]} > 55, would defragment" <<<"$out" || fail "defrag-high.sh -n about $d: $out"
done
for d in warm cold empty @score; do
	grep -qxF "$d: score ${SCORE[$d]} <= 55, left alone" <<<"$out" || fail "defrag-high.sh -n about $d: $out"
done
grep -q '^top' <<<"$out" && fail "defrag-high.sh -n mentions top-level files: $out"
for d in "${TOPDIRS[@]}"; do check_eq "$(runs_of "$d")" "${RUNS[$d]}" "runs of $d after defrag-high.sh -n"; done

# ---- a failure: read-only filesystem ------------------------------------------------------------------------
mount -o remount,ro "$SRC" || fail "cannot remount $SRC read-only"
rc=0
out=$("$EX/defrag-high.sh" "$MNT") || rc=$?
mount -o remount,rw "$SRC" || fail "cannot remount $SRC read-write"
check_eq "$rc" 1 "exit status of defrag-high.sh on a read-only filesystem ($out)"
grep -q '^hot1: FAILED .*Read-only file system' <<<"$out" || fail "defrag-high.sh does not report EROFS: $out"
grep -q '^summary: 7 directories checked, threshold 55, 0 defragmented, 3 failed$' <<<"$out" || fail "summary of the failed run: $out"

# ---- defrag-high.sh: exactly the directories above 55 --------------------------------------------------------
out=$("$EX/defrag-high.sh" "$MNT") || fail "defrag-high.sh failed: $out"
log "defrag-high.sh:
$out"
for d in hot1 hot2 "sp ace"; do
	grep -q "^$d: done: improved [1-9]" <<<"$out" || fail "defrag-high.sh did not defragment $d: $out"
	now=$(score_of "$d")
	[ "$now" -le 55 ] && [ "$now" -lt "${SCORE[$d]}" ] || fail "$d still scores $now (was ${SCORE[$d]})"
	grep -q "^$d: done: .*; score now $now$" <<<"$out" || fail "defrag-high.sh reports another score for $d: $out"
	[ "$(runs_of "$d")" -lt "${RUNS[$d]}" ] || fail "runs of $d did not drop"
done
for d in warm cold empty @score top0 top1; do
	check_eq "$(runs_of "$d")" "${RUNS[$d]}" "runs of $d (left alone)"
done
for f in top0 top1; do
	check_eq "$(filefrag_count "$SRC/$f")" "${RUNS[$f]}" "filefrag of $f (left alone)"
done
grep -qx 'summary: 7 directories checked, threshold 55, 3 defragmented, 0 failed' <<<"$out" || fail "summary: $out"
# A threshold below warm's score takes warm too; "$MKFRAG verify" checks the data.
out=$("$EX/defrag-high.sh" "$MNT" $((SCORE[warm] - 1))) || fail "defrag-high.sh with threshold $((SCORE[warm] - 1)) failed: $out"
grep -q "^warm: done: improved [1-9]" <<<"$out" || fail "warm/ was not defragmented with threshold $((SCORE[warm] - 1)): $out"
for i in 0 1; do "$MKFRAG" verify frag "$SRC/warm/w$i" "$i" || fail "content of warm/w$i after defrag"; done
for i in 0 1 2; do "$MKFRAG" verify frag "$SRC/hot2/g$i" "$i" || fail "content of hot2/g$i after defrag"; done
rc=0
"$EX/defrag-high.sh" "$MNT" 101 >/dev/null 2>&1 || rc=$?
check_eq "$rc" 2 "defrag-high.sh with threshold 101"
rc=0
"$EX/defrag-high.sh" "$MNT/hot1" >/dev/null 2>&1 || rc=$?
check_eq "$rc" 2 "defrag-high.sh below the mount root"

# ---- cron.example ----------------------------------------------------------------------------------------------
line=$(grep -v '^[[:space:]]*#' "$EX/cron.example" | grep -v '^[[:space:]]*$')
check_eq "$(wc -l <<<"$line")" 1 "lines of cron.example"
read -r m h dom mon dow user cmd <<<"$line"
[[ $m =~ ^[0-9]+$ ]] && [ "$m" -le 59 ] && [[ $h =~ ^[0-9]+$ ]] && [ "$h" -le 23 ] ||
	fail "cron.example: minute/hour '$m $h'"
check_eq "$dom $mon $dow $user" "* * * root" "cron.example: nightly, as root"
grep -q '/usr/local/libexec/e4infofs/defrag-high\.sh \(-s [0-9]* \)\{0,1\}/mnt/e4info' <<<"$cmd" || fail "cron.example does not run defrag-high.sh on /mnt/e4info: $cmd"
cmd=${cmd//\/usr\/local\/libexec\/e4infofs\//$EX/}
cmd=${cmd//\/mnt\/e4info/$MNT}
cmd=${cmd//\/run\/lock\//$T/}
mkdir "$SRC/hot3"
# The free space left by the jobs above decides how round-robin allocation
# lands: try denser interleavings until hot3 is fragmented enough.
for layout in "2 512 4" "8 256 4" "16 128 4"; do
	rm -f "$SRC"/hot3/h*
	# shellcheck disable=SC2086
	"$MKFRAG" frag "$SRC/hot3" h $layout
	[ "$(score_of hot3)" -gt 55 ] && break
done
[ "$(score_of hot3)" -gt 55 ] || fail "hot3 scores $(score_of hot3)"
# While another run holds the lock, the line does nothing.
lock=$(grep -o "$T/[^ ]*\.lock" <<<"$cmd") || fail "no lock file in the cron line: $cmd"
flock "$lock" sleep 3 &
holder=$!
sleep 0.5
rc=0
out=$(sh -c "$cmd" 2>&1) || rc=$?
[ "$rc" != 0 ] && [ -z "$out" ] || fail "the cron line ran while the lock was held (status $rc): $out"
wait "$holder"
out=$(sh -c "$cmd" 2>&1) || fail "the cron line failed: $cmd: $out"
grep -q '^hot3: done: improved' <<<"$out" || fail "the cron line did not defragment hot3: $out"
stop_e4infofs
log "ok"
