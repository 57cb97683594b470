#!/usr/bin/env bash
# dir_locality of directory nodes (in stats and stats.json) equals the
# figure computed apart from e4infofs by tests/tools/dls.py (filefrag -v
# over each directory's files in readdir order, which must be the daemon's
# order): for a directory whose files lie end to end in readdir order (1),
# one whose files lie in the reverse order, a subtree of both, the root
# (with a hard link: counted in each directory holding a name of it), a
# file node, and again after files change, appear and go.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
setup_image 64 -b 4096
DLS=(python3 "$(dirname "$0")/../tools/dls.py")

# write_files DIR ORDER SIZE_KIB...: creates files f00.. in DIR empty, then
# writes them (SIZE_KIB each, in name order) one by one in readdir order
# (fwd) or its reverse (rev), each fsync'ed before the next. On one CPU:
# small files come from the allocating CPU's preallocation, so files
# written one after another then lie end to end.
write_files() {
	taskset -c 0 python3 - "$@" <<'EOF'
import os, sys
d, order, sizes = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3:]]
size = {"f%02d" % i: s for i, s in enumerate(sizes)}
for n in size:
    open(os.path.join(d, n), "wb").close()
seq = [e.name for e in os.scandir(d) if e.name in size]
for n in reversed(seq) if order == "rev" else seq:
    fd = os.open(os.path.join(d, n), os.O_WRONLY)
    os.write(fd, n[-1].encode() * (size[n] * 1024))
    os.fsync(fd)
    os.close(fd)
EOF
}

mkdir -p "$SRC/top/seq" "$SRC/top/rev" "$SRC/other"
write_files "$SRC/top/seq" fwd 12 20 8 40 16 4 28
write_files "$SRC/top/rev" rev 12 20 8 40 16 4 28
# Fragmented, sparse, preallocated and empty files among the reversed ones.
"$MKFRAG" frag "$SRC/top/rev" x 2 64 8
"$MKFRAG" sparse "$SRC/top/rev/sparse" 1024
"$MKFRAG" prealloc "$SRC/top/rev/prealloc" 256
: >"$SRC/top/rev/empty"
"$MKFRAG" frag "$SRC/other" y 3 128 16
ln "$SRC/top/seq/f03" "$SRC/other/link"
sync
start_e4infofs

# check_order: the daemon lists the files of every directory in the order
# python's os.scandir (readdir) gives them.
check_order() {
	python3 - "$SRC" "$MNT" <<'EOF' || fail "the daemon's order of files is not readdir's (above)"
import os, sys
src, mnt = sys.argv[1:]
bad = 0
for d, subs, _ in os.walk(src):
    if d == src:
        subs.remove("lost+found")
    rel = os.path.relpath(d, src)
    want = [e.name for e in os.scandir(d) if e.is_file(follow_symlinks=False)]
    with open(os.path.join(mnt, rel, "extents")) as f:
        got = [line.rstrip("\n").split(" ", 3)[3] for line in f][1:]
    if got != want:
        print("%s: readdir %s, the daemon %s" % (rel, want, got), file=sys.stderr)
        bad += 1
sys.exit(bad != 0)
EOF
}

NODES=(top/seq top/rev top other "")

# check_all WHAT: the order, then dir_locality in the stats and stats.json
# of each of NODES (a subtree; "" the root) against dls.py's over it;
# dls.py's lines ("jumps blocks dls") of /top/seq, /top/rev and / into
# SEQ, REV and ROOT.
check_all() {
	local what=$1 i node mnt want out
	check_order
	out=$("${DLS[@]}" -r "${NODES[@]/#/$SRC/}") || fail "dls.py failed"
	mapfile -t DLS_LINES <<<"$out"
	for i in "${!NODES[@]}"; do
		node=${NODES[$i]}
		mnt=$MNT${node:+/$node}
		want=${DLS_LINES[$i]##* }
		check_eq "$(stat_key "$mnt/stats" dir_locality)" "$want" \
			"/$node: dir_locality in stats (dls.py: ${DLS_LINES[$i]})"
		check_eq "$(jq '.dir_locality * 10000 | round' "$mnt/stats.json")" \
			"$(awk -v v="$want" 'BEGIN { printf "%d", v * 10000 + 0.5 }')" \
			"/$node: dir_locality in stats.json"
		log "$what: /$node: jumps blocks dir_locality ${DLS_LINES[$i]}"
	done
	SEQ=${DLS_LINES[0]} REV=${DLS_LINES[1]} ROOT=${DLS_LINES[4]}
}

check_all "initial tree"
# The layouts came out as intended, or the comparison proves little.
check_eq "${SEQ%% *} ${SEQ##* }" "0 1.0000" "seq: jumps and dir_locality"
j=${REV%% *}
[ "$j" -ge 6 ] || fail "rev: $j jumps, expected >= 6 (one between each reversed file)"
# The hard link counts in both its directories.
read -r _ b_root _ <<<"$ROOT"
blocks=$(jq .blocks "$MNT/stats.json")
link=$(jq .blocks "$MNT/other/link/stats.json")
check_eq "$b_root" $((blocks + link)) "root: blocks behind dir_locality (the link twice)"
# A file node: the figure of a directory holding only it.
runs=$(filefrag_count "$SRC/top/rev/x0")
blocks=$(jq .blocks "$MNT/top/rev/x0/stats.json")
want=$(python3 -c "print('%.4f' % (1 - ($runs - 1) / $blocks))")
check_eq "$(stat_key "$MNT/top/rev/x0/stats" dir_locality)" "$want" "file node x0: dir_locality"
check_eq "$(stat_key "$MNT/top/rev/empty/stats" dir_locality)" 1.0000 "empty file node: dir_locality"

# Changes: the cache must see them. An append lands elsewhere, a file is
# rewritten, one appears, one goes.
head -c 40960 /dev/urandom >>"$SRC/top/seq/f00"
sync "$SRC/top/seq/f00"
dd if=/dev/urandom of="$SRC/top/rev/f02" bs=4k count=5 conv=fsync status=none
head -c 12288 /dev/urandom >"$SRC/top/seq/new" && sync "$SRC/top/seq/new"
rm "$SRC/top/seq/f05"
check_all "after changes"
check "seq: no longer 1 after an append elsewhere" [ "${SEQ##* }" != 1.0000 ]

stop_e4infofs
log "ok"
