#!/usr/bin/env bash
# Reading the generated files: 1-byte reads and reads at offsets give the
# same bytes as cat, stat says size 0; listing the tree maps no file and
# scans nothing; re-reading an unchanged subtree maps no file; a change is
# reflected at the next read and costs only the changed file's mapping.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
setup_image 128

mkdir -p "$SRC/a/b" "$SRC/c"
"$MKFRAG" frag "$SRC/a" f 4 256 8
"$MKFRAG" frag "$SRC/a/b" g 3 128 4
"$MKFRAG" frag "$SRC/c" h 5 64 4
"$MKFRAG" sparse "$SRC/c/sparse" 1024
"$MKFRAG" frag "$SRC" top 2 64 8
mkdir "$SRC/many"
for i in $(seq 1 600); do echo "$i" >"$SRC/many/f$i"; done
sync
nfiles=$(find "$SRC" -xdev -path "$SRC/lost+found" -prune -o -type f -print | wc -l)

start_e4infofs

# ---- listing maps nothing --------------------------------------------------
# Reading metrics scores the mount (from the cache): a first read maps the
# files, so the counters below are taken once that is done.
cat "$MNT/metrics" >/dev/null
i0=$(metric e4infofs_inspections_total)
s0=$(metric e4infofs_scans_total)
ls -lR "$MNT" >/dev/null
find "$MNT" >/dev/null
find "$MNT" -type f -exec stat -c '%s %U %A' {} + >/dev/null
stat "$MNT"/a/f0 "$MNT"/a/f0/* >/dev/null
# The pictures have a true size, known without mapping or scanning.
stat -c %s "$MNT"/map.svg "$MNT"/map.png "$MNT"/index.html "$MNT"/a/index.html "$MNT"/a/map.png "$MNT"/a/f0/map.svg "$MNT"/a/f0/map.png >/dev/null
if command -v gio >/dev/null; then
	gio list -a standard::size,time::modified "$MNT" "$MNT/a" "$MNT/a/f0" >/dev/null
fi
check_eq "$(metric e4infofs_inspections_total)" "$i0" "inspections after ls -lR / find / stat"
check_eq "$(metric e4infofs_scans_total)" "$s0" "scans after ls -lR / find / stat"

# ---- lookups of a listing are counted ------------------------------------
# `ls -l` gets entries with their attributes in one request per buffer
# (READDIRPLUS); each entry is one kernel lookup the kernel later forgets.
# Counted too low, a later stat fails (ESTALE); too high, nodes leak.
nodes_settle() { # wait until the node count is at most $1 (forgets are queued)
	local i n
	for ((i = 0; i < 50; i++)); do
		n=$(metric e4infofs_nodes)
		[ "$n" -le "$1" ] && break
		sleep 0.1
	done
	echo "$n"
}
for round in 1 2 3; do
	listed=$(ls -l "$MNT/many" | grep -c ' f[0-9]*$')
	check_eq "$listed" 600 "ls -l entries, round $round"
	n=$(metric e4infofs_nodes)
	check "nodes held after ls -l: $n, round $round" [ "$n" -ge 600 ]
	check_eq "$(find "$MNT/many" -mindepth 2 -name score | wc -l)" 600 "score of every listed file, round $round"
	cat "$MNT/many/f$((round * 7))/extents" >/dev/null || fail "extents of a listed file, round $round"
	echo 2 >/proc/sys/vm/drop_caches
	n=$(nodes_settle 3)
	check "nodes after the kernel forgot the listing: $n (a lookup counted twice?), round $round" [ "$n" -le 3 ]
done

# ---- sizes and types -------------------------------------------------------
# Generated files report 0; the writable triggers 4096 (docs/defrag.md);
# the pictures their fixed size.
# One find for every file (a stat process per file took minutes); 600
# files of 9 attribute files each at least.
bad=$(find "$MNT" -type f -printf '%s %f\n' | awk '
	$2 == "defrag" || $2 == "jobs" { want = 4096 }
	$2 ~ /^map(-before)?\.(svg|png)$/ { want = 131072 } # fixed (docs/files.md)
	$2 == "index.html" { want = 262144 }
	!($2 == "defrag" || $2 == "jobs" || $2 ~ /^map(-before)?\.(svg|png)$/ || $2 == "index.html") { want = 0 }
	{ n++; if ($1 != want) print $2 " has size " $1 ", not " want }
	END { if (n < 600 * 9) print "only " n " files found" }')
check_eq "$bad" "" "sizes of the generated files"
check_eq "$(stat -c %F "$MNT/a/f0")" "directory" "a file's node"

# ---- partial reads ---------------------------------------------------------
for f in score stats extents report stats.json a/score a/stats a/extents a/f0/score a/f0/stats \
	a/f0/extents a/f0/stats.json c/sparse/extents; do
	full=$(cat "$MNT/$f"; echo .)
	[ "${#full}" -gt 2 ] || fail "$f: empty"
	bytes=$(dd if="$MNT/$f" bs=1 status=none; echo .)
	case $f in
	*stats | *stats.json)
		# Scan date and duration may differ between two opens.
		strip() { sed -E 's/"?(scanned_at|scan_seconds)"?: ?("[^"]*"|[^,}]*)//g'; }
		check_eq "$(strip <<<"$bytes")" "$(strip <<<"$full")" "$f: dd bs=1 vs cat"
		;;
	*) check_eq "$bytes" "$full" "$f: dd bs=1 vs cat" ;;
	esac
	check_eq "$(head -c 1 "$MNT/$f")" "${full:0:1}" "$f: head -c 1"
done
# Reads of one open at any offset, in any order, come from one snapshot.
python3 - "$MNT/a/f0/extents" "$MNT/stats" <<'EOF' || fail "reads at offsets"
import os, random, sys
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        whole = f.read()
    fd = os.open(path, os.O_RDONLY)
    try:
        got = bytearray(len(whole))
        offs = list(range(0, len(whole), 7))
        random.Random(1).shuffle(offs)
        for o in offs:
            got[o:o + 7] = os.pread(fd, 7, o)
        assert os.pread(fd, 100, len(whole)) == b"", "read past the end returned data"
        assert os.pread(fd, 1 << 20, 0) == bytes(got), "a big read differs from small reads of the same open"
        if not path.endswith("stats"):
            assert bytes(got) == whole, "%s: pread pieces differ from a read" % path
    finally:
        os.close(fd)
EOF
dd_part=$(dd if="$MNT/a/f0/extents" bs=1 skip=3 count=10 status=none)
check_eq "$dd_part" "$(cut -c4-13 <<<"$(head -n 1 "$MNT/a/f0/extents")")" "dd skip=3 count=10"

# ---- opens closed before their content is made -----------------------------
# The content is generated after the open is answered (docs/design.md):
# opens closed at once, while the kernel forgets their nodes, must leave
# nothing held and nothing freed twice (ASan watches the daemon in CI);
# reads of one open in parallel, sent before its content is made, all get
# that one content.
python3 - "$MNT" <<'EOF' || fail "opens closed before their content was made"
import os, sys, threading
mnt = sys.argv[1]
paths = [mnt + "/" + p for p in ("score", "report", "a/extents", "many/score", "a/f0/extents",
                                 "c/sparse/stats", "many/f5/score")]
errors = []
def churn(k):
    try:
        for i in range(300):
            os.close(os.open(paths[(i + k) % len(paths)], os.O_RDONLY))
    except OSError as e:
        errors.append(e)
def forget():
    for _ in range(20):
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("2")
threads = [threading.Thread(target=churn, args=(k,)) for k in range(4)]
threads.append(threading.Thread(target=forget))
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors
for path in paths:
    fd = os.open(path, os.O_RDONLY)
    got = [None] * 4
    def rd(j):
        got[j] = os.pread(fd, 1 << 20, 0)
    readers = [threading.Thread(target=rd, args=(j,)) for j in range(4)]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    os.close(fd)
    assert got[0] and all(g == got[0] for g in got), "%s: parallel reads of one open differ" % path
EOF
echo 2 >/proc/sys/vm/drop_caches
n=$(nodes_settle 3)
check "nodes after the opens closed unread were forgotten: $n" [ "$n" -le 3 ]

# ---- re-reads of an unchanged tree map nothing ------------------------------
cat "$MNT/score" "$MNT/stats" "$MNT/report" >/dev/null
i1=$(metric e4infofs_inspections_total)
# (the first metrics read above made the first scan: every file mapped once)
[ "$i1" -ge "$nfiles" ] || fail "inspections $i1 after the first scan, expected >= $nfiles"
score0=$(cat "$MNT/score")
for i in 1 2 3; do cat "$MNT/score" "$MNT/stats" "$MNT/report" "$MNT/a/score" "$MNT/a/b/stats" >/dev/null; done
check_eq "$(metric e4infofs_inspections_total)" "$i1" "inspections after re-reading unchanged dirs"
check_eq "$(cat "$MNT/score")" "$score0" "score of an unchanged tree"
# (revalidations may stay 0: a watched, untouched directory needs no stat)
[[ $(metric e4infofs_revalidations_total) =~ ^[0-9]+$ ]] || fail "e4infofs_revalidations_total is not a count"

# ---- a change is reflected, at the cost of one mapping -----------------------
bytes0=$(stat_key "$MNT/stats" bytes)
blocks0=$(stat_key "$MNT/stats" blocks)
runs0=$(stat_key "$MNT/a/b/stats" runs)
i2=$(metric e4infofs_inspections_total)
# Append 64 KiB to a/b/g1 in 4 KiB pieces interleaved with another file, so
# the appended blocks are new runs.
for k in $(seq 1 16); do
	head -c 4096 /dev/urandom >>"$SRC/a/b/g1"
	sync "$SRC/a/b/g1"
	head -c 4096 /dev/urandom >>"$SRC/a/b/g0.pad"
	sync "$SRC/a/b/g0.pad"
done
rm "$SRC/a/b/g0.pad"
sync
bytes1=$(stat_key "$MNT/stats" bytes)
check_eq "$bytes1" $((bytes0 + 65536)) "root stats bytes after appending 64 KiB"
i3=$(metric e4infofs_inspections_total)
d=$((i3 - i2))
{ [ "$d" -ge 1 ] && [ "$d" -le 3 ]; } || fail "inspections grew by $d after one file changed (expected 1..3; $nfiles files in the tree)"
want=$(e4defrag_score "$SRC")
got=$(cat "$MNT/score")
within "$got" "$want" 1 || fail "score after the change: e4infofs $got, e4defrag -c $want"
check_eq "$(stat_key "$MNT/a/b/stats" runs)" "$(($(filefrag_count "$SRC/a/b/g0") + $(filefrag_count "$SRC/a/b/g1") + $(filefrag_count "$SRC/a/b/g2")))" "a/b runs after the change"
[ "$(stat_key "$MNT/a/b/stats" runs)" -gt "$runs0" ] || fail "a/b runs did not grow"
check_eq "$(sed -n 's/^runs: //p' "$MNT/a/b/g1/extents")" "$(filefrag_count "$SRC/a/b/g1")" "g1 runs after the change"
[ "$(stat_key "$MNT/stats" blocks)" -gt "$blocks0" ] || fail "blocks did not grow"

# New and removed files are seen.
files0=$(stat_key "$MNT/stats" files)
"$MKFRAG" frag "$SRC/c" new 2 64 4
check_eq "$(stat_key "$MNT/stats" files)" $((files0 + 2)) "files after creating 2"
rm "$SRC/a/f3"
check_eq "$(stat_key "$MNT/stats" files)" $((files0 + 1)) "files after removing 1"
check_eq "$(stat_key "$MNT/a/stats" files)" 6 "a/ files after removing 1"
want=$(e4defrag_score "$SRC")
got=$(cat "$MNT/score")
within "$got" "$want" 1 || fail "score after create/remove: e4infofs $got, e4defrag -c $want"
# Listing still maps nothing.
i4=$(metric e4infofs_inspections_total)
s4=$(metric e4infofs_scans_total)
ls -lR "$MNT" >/dev/null
check_eq "$(metric e4infofs_inspections_total) $(metric e4infofs_scans_total)" "$i4 $s4" "counters after ls -lR"

# metrics is Prometheus text.
grep -Eq '^# TYPE e4infofs_inspections_total counter$' "$MNT/metrics" || fail "metrics: no TYPE line"
grep -Evq '^(#.*|[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [0-9.eE+-]+( [0-9]+)?)$' "$MNT/metrics" &&
	fail "metrics: lines not in Prometheus text format: $(grep -Ev '^(#.*|[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [0-9.eE+-]+( [0-9]+)?)$' "$MNT/metrics")"

stop_e4infofs
log "ok"
