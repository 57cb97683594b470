#!/usr/bin/env bash
# A subtree job over a fragmented tree of ~280 files (4 KiB .. 6 MiB, sparse,
# preallocated, empty, one-block files, a hard link pair): every file keeps
# its content, atime/mtime/ctime (ns) and SEEK_DATA/SEEK_HOLE map; no file
# gets more runs; unwritten ranges still read as zeros; the status counts
# add up with filefrag; score, and every file's extents, show the new layout
# at their next read (cache invalidation); e2fsck is clean afterwards.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
setup_image 512

build_mixed_tree "$SRC"
nfiles=$(unique_files "$SRC")
[ "$nfiles" -ge 250 ] || fail "only $nfiles files built"

start_e4infofs

# Populate the daemon's caches first, so the reads after the job prove that
# it invalidated what it moved.
score_before=$(cat "$MNT/score") || fail "cannot read score"
runs_list "$SRC" >"$T/runs.before"
while read -r rel runs; do
	got=$(tail -n 1 "$MNT/$rel/extents") || fail "cannot read $rel/extents"
	check_eq "$got" "runs: $runs" "$rel/extents before the job"
done <"$T/runs.before"
sum_before=$(grep -v '^links/h0-link ' "$T/runs.before" | awk '{ s += $2 } END { print s }')
[ "$score_before" -ge 56 ] || fail "score before the job is $score_before: the tree is not fragmented enough to test anything"

drop_caches
"${FSNAP[@]}" snap "$SRC" >"$T/snap.before"
check_eq "$(wc -l <"$T/snap.before")" "$(wc -l <"$T/runs.before")" "files in the snapshot"
drop_caches

start=$(now_s)
echo 1 >"$MNT/defrag" || fail "echo 1 > \$MNT/defrag failed"
log "job took $(elapsed_ms "$start") ms"

status=$(cat "$MNT/defrag")
log "status: $(tr '\n' ' ' <<<"$status")"
check_eq "$(dkey "$MNT/defrag" state)" "done" "state"
check_eq "$(dkey "$MNT/defrag" failed)" 0 "failed"
check_eq "$(dkey "$MNT/defrag" cancelled)" 0 "cancelled"
improved=$(dkey "$MNT/defrag" improved)
[ "$improved" -gt 200 ] || fail "improved: $improved, expected most of the $nfiles files"
check_eq "$(dkey "$MNT/defrag" files)" "$nfiles" "files (each inode once)"
total=0
for o in improved optimal no-gain skipped failed cancelled; do
	total=$((total + $(dkey "$MNT/defrag" "$o")))
done
check_eq "$total" "$nfiles" "sum of the outcomes"
check_eq "$(dkey "$MNT/defrag" runs_before)" "$sum_before" "runs_before vs filefrag (each inode once)"
# Only one-block files may be skipped, and they are too-small (the empty,
# hole-only and one-byte files have no more than one block too).
skipped=$(dkey "$MNT/defrag" skipped)
check_eq "$(dkey "$MNT/defrag" skipped_too-small)" "$skipped" "skipped_too-small = skipped"
if grep -E '^skipped_' <<<"$status" | grep -v '^skipped_too-small:'; then
	fail "unexpected skip reasons"
fi

runs_list "$SRC" >"$T/runs.after"
sum_after=$(grep -v '^links/h0-link ' "$T/runs.after" | awk '{ s += $2 } END { print s }')
check_eq "$(dkey "$MNT/defrag" runs_after)" "$sum_after" "runs_after vs filefrag (each inode once)"
log "runs: $sum_before -> $sum_after"
[ "$sum_after" -lt $((sum_before / 10)) ] || fail "runs $sum_before -> $sum_after: less than a 10x gain"

# No file gets more runs.
worse=$(join "$T/runs.before" "$T/runs.after" | awk '$3 > $2 { print $1 ": " $2 " -> " $3 }')
[ -z "$worse" ] || fail "files with more runs after the job: $worse"

# Content, timestamps (ns), holes: identical for every file.
drop_caches
"${FSNAP[@]}" snap "$SRC" >"$T/snap.after"
if ! cmp -s "$T/snap.before" "$T/snap.after"; then
	join "$T/snap.before" "$T/snap.after" | awk '
		{ n = (NF - 1) / 2
		  split("sha256 atime mtime ctime size holes", k)
		  for (i = 2; i <= n + 1; i++)
			if ($i != $(i + n)) print $1 ": " k[i - 1] " " $i " -> " $(i + n) }' | head -n 20 >&2
	diff <(cut -d' ' -f1 "$T/snap.before") <(cut -d' ' -f1 "$T/snap.after") >&2 || true
	fail "files changed by the job (content, timestamps or holes; above)"
fi
log "$(wc -l <"$T/snap.after") names: content, atime/mtime/ctime and hole maps unchanged"

# Unwritten ranges still read as zeros, data ranges hold the pattern.
for f in odd/prealloc odd/prealloc-small; do check "$f content" "$MKFRAG" verify prealloc "$SRC/$f" 0; done
for f in odd/sparse odd/sparse-tail; do check "$f content" "$MKFRAG" verify sparse "$SRC/$f" 0; done
# The unwritten ranges are still unwritten (not written zeros).
for f in odd/prealloc odd/prealloc-small; do
	u=$(filefrag -v "$SRC/$f" | grep -c unwritten || true)
	[ "$u" -gt 0 ] || fail "$f: no unwritten extent left after the job"
done

# The mount shows the new layout at the next read.
score_after=$(cat "$MNT/score")
want=$(e4defrag_score "$SRC")
log "score: $score_before -> $score_after (e4defrag -c after: $want)"
[ "$score_after" -lt "$score_before" ] || fail "score did not drop: $score_before -> $score_after"
within "$score_after" "$want" 1 || fail "score after the job: e4infofs $score_after, e4defrag -c $want"
while read -r rel runs; do
	got=$(tail -n 1 "$MNT/$rel/extents") || fail "cannot read $rel/extents"
	check_eq "$got" "runs: $runs" "$rel/extents after the job (stale cache?)"
done <"$T/runs.after"

stop_e4infofs
umount "$SRC" || fail "umount $SRC failed"
out=$(e2fsck -fn "$LOOP" 2>&1) || { echo "$out" >&2; fail "e2fsck -fn found problems after the job"; }
log "ok"
