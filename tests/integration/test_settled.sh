#!/usr/bin/env bash
# With the fanotify watch, a re-read of a subtree where nothing changed
# opens none of its 20,000 directories and stats none of its files
# (e4infofs_dir_opens_total, e4infofs_revalidations_total); after a change
# it opens only the directories on the way to it. Figures and top files
# stay those of a daemon without the watch (-o watch=0, which checks every
# directory and file at each read) after file changes, creations,
# deletions, a directory moved across directories, and a queue overflow
# (then everything is checked again).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
setup_image 512 -b 4096 -N 90000

TOPS=20 LEAVES=1000
NDIRS=$((TOPS * LEAVES + TOPS))
python3 - "$SRC" "$TOPS" "$LEAVES" <<'EOF'
import os, sys
src, tops, leaves = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for t in range(tops):
    for l in range(leaves):
        d = f"{src}/t{t}/l{l}"
        os.makedirs(d)
        with open(f"{d}/one", "wb") as f:
            f.write(b"x" * (1 + (t * leaves + l) % 9000))
EOF
# Fragmented files of equal rank in several subtrees: the top files then
# depend on the order of ties, which merging subtrees must keep.
for i in 3 5 11 17; do
	"$MKFRAG" frag "$SRC/t$i/l$((i * 7))" f 2 64 4
	"$MKFRAG" frag "$SRC/t$i" g 3 128 8
done
"$MKFRAG" frag "$SRC" root 2 64 4
sync

start_e4infofs
mount_e4infofs "$SRC" "$T/ref" -o watch=0
REF=$T/ref

metric_of() {
	local v
	v=$(awk -v n="$2" '$1 == n { print $2 }' "$1/metrics") || fail "cannot read $1/metrics"
	[ -n "$v" ] || fail "no metric $2 in $1/metrics"
	echo "$v"
}

# same_as_ref WHAT: stats (without the scan's time), score and report of
# the root and of t3 are those of the daemon without the watch.
same_as_ref() {
	local node f a b
	for node in "" /t3 /t5/l35; do
		for f in stats score report; do
			a=$(grep -v '^scan' "$MNT$node/$f") || fail "$1: cannot read $MNT$node/$f"
			b=$(grep -v '^scan' "$REF$node/$f") || fail "$1: cannot read $REF$node/$f"
			[ "$a" = "$b" ] || fail "$1: $node/$f differs from the daemon without the watch:
$(diff <(echo "$a") <(echo "$b") | head -20)"
		done
	done
}

# counts MNT: "OPENS REVALIDATIONS" from one read of MNT/metrics (a read's
# own scans count in the next one).
counts() {
	awk '$1 == "e4infofs_dir_opens_total" { o = $2 } $1 == "e4infofs_revalidations_total" { r = $2 }
	     END { if (o == "" || r == "") exit 1; print o, r }' "$1/metrics" || fail "no counters in $1/metrics"
}

# reread_opens: directories opened and files stated by one read of the
# root's score (and the scans of the metrics read before it), as
# "OPENS REVALIDATIONS".
reread_opens() {
	local o0 r0 o1 r1
	read -r o0 r0 < <(counts "$MNT")
	cat "$MNT/score" >/dev/null || fail "cannot read score"
	read -r o1 r1 < <(counts "$MNT")
	echo "$((o1 - o0)) $((r1 - r0))"
}

# read_ms FILE [CHANGED]: median milliseconds of 30 reads of FILE; with
# CHANGED, each read follows an append to that file (not timed).
read_ms() {
	python3 - "$1" "${2:-}" <<'EOF'
import statistics, sys, time
path, changed = sys.argv[1], sys.argv[2]
t = []
for _ in range(30):
    if changed:
        with open(changed, "ab") as f:
            f.write(b"y")
    s = time.perf_counter()
    with open(path, "rb") as f:
        f.read()
    t.append((time.perf_counter() - s) * 1000)
print(f"{statistics.median(t):.2f}")
EOF
}

cat "$MNT/score" >/dev/null || fail "cannot read score"
same_as_ref "first read"
read -r opens revals < <(reread_opens)
check_eq "$opens" 0 "directories opened by a re-read of an unchanged tree of $NDIRS directories"
check_eq "$revals" 0 "files stated by a re-read of an unchanged tree"
log "unchanged tree of $NDIRS directories: re-read of score opens $opens directories, stats $revals files;" \
	"median read $(read_ms "$MNT/score") ms with the watch, $(read_ms "$REF/score") ms without"

# Without the watch every directory is opened at each read (what the
# comparison above would have shown without settled subtrees).
o0=$(metric_of "$REF" e4infofs_dir_opens_total)
cat "$REF/score" >/dev/null
o1=$(metric_of "$REF" e4infofs_dir_opens_total)
[ $((o1 - o0)) -ge $((NDIRS - TOPS)) ] || fail "watch=0: a re-read opened $((o1 - o0)) directories, expected all $NDIRS"

# One file's data changes: only the way down to it is opened, one file stated.
printf 'more data' >>"$SRC/t5/l35/one"
read -r opens revals < <(reread_opens)
[ "$opens" -le 2 ] || fail "after one file changed: $opens directories opened, expected the 2 on its way"
check_eq "$revals" 1 "files stated after one file changed"
same_as_ref "after one file changed"
log "a read after one file changed: $(read_ms "$MNT/score" "$SRC/t7/l2/one") ms (median)"
same_as_ref "after one file changed 30 times"

# A file made fragmented, a new file, a deleted file and directory, a
# directory moved into another subtree, a directory renamed in place.
"$MKFRAG" frag "$SRC/t9/l400" h 2 256 4
touch "$SRC/t9/l401/new"
rm "$SRC/t3/l21/f0"
rm -r "$SRC/t4/l4"
mv "$SRC/t3/l21" "$SRC/t8/l999/moved"
mv "$SRC/t11/l77" "$SRC/t11/renamed"
sync
read -r opens revals < <(reread_opens)
[ "$opens" -lt 100 ] || fail "after changes in 6 places: $opens directories opened"
same_as_ref "after creations, deletions and moves"
read -r opens revals < <(reread_opens)
check_eq "$opens" 0 "directories opened by a re-read after the changes were read"

# A queue overflow: events are lost, so everything is checked again.
max=$(cat /proc/sys/fs/fanotify/max_queued_events 2>/dev/null || echo 16384)
kill -STOP "$DAEMON_PID"
on_cleanup "kill -CONT $DAEMON_PID"
python3 - "$SRC/flood" $((max + 1000)) <<'EOF'
import os, sys
os.mkdir(sys.argv[1])
for i in range(int(sys.argv[2])):
    open(f"{sys.argv[1]}/e{i}", "wb").close()
EOF
printf 'after the overflow' >>"$SRC/t13/l13/one"
kill -CONT "$DAEMON_PID"
read -r opens revals < <(reread_opens)
[ "$opens" -ge $((NDIRS - 10)) ] || fail "after a queue overflow: $opens directories opened, expected all $NDIRS again"
same_as_ref "after a queue overflow"
read -r opens revals < <(reread_opens)
check_eq "$opens" 0 "directories opened by a re-read after the overflow was read"
log "after an overflow every directory was checked again; then settled"
