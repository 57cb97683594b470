#!/usr/bin/env bash
# dir_locality of directory nodes (in stats and stats.json) equals the
# figure computed here independently, from `filefrag -v` over each
# directory's files in python's readdir order (which must be the daemon's
# order): for a directory whose files lie end to end in readdir order (1),
# one whose files lie in the reverse order, a subtree of both, the root
# (with a hard link: counted in each directory holding a name of it), a
# file node, and again after files change, appear and go.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
setup_image 64 -b 4096

cat >"$T/dls.py" <<'EOF'
"""dls.py write DIR ORDER SIZE_KIB...: creates files f00.. in DIR empty, then
writes them (SIZE_KIB each, in name order) one by one in readdir order
(ORDER=fwd) or its reverse (rev), each fsync'ed before the next.

dls.py check MNT SRC NODE...: for each NODE (a path relative to SRC, "" the
root): the daemon's directory order equals readdir's, and dir_locality in
MNT/NODE/stats and stats.json equals 1 - jumps / blocks over the subtree,
computed from filefrag -v. Prints "NODE jumps blocks value" per node."""
import json, os, re, subprocess, sys

def write(d, order, sizes):
    names = ["f%02d" % i for i in range(len(sizes))]
    size = dict(zip(names, sizes))
    for n in names:
        open(os.path.join(d, n), "wb").close()
    seq = [e.name for e in os.scandir(d) if e.name in size]
    if order == "rev":
        seq.reverse()
    for n in seq:
        fd = os.open(os.path.join(d, n), os.O_WRONLY)
        os.write(fd, bytes([ord(n[-1])]) * (size[n] * 1024))
        os.fsync(fd)
        os.close(fd)

REC = re.compile(r"^\s*\d+:\s*(\d+)\.\.\s*(\d+):\s*(\d+)\.\.\s*(\d+):\s*(\d+):")

def records(path):
    """(logical, physical, length) per FIEMAP record, in blocks."""
    out = subprocess.run(["filefrag", "-v", path], check=True, capture_output=True, text=True).stdout
    recs = []
    for line in out.splitlines():
        m = REC.match(line)
        if m:
            l0, l1, p0, p1, n = map(int, m.groups())
            assert l1 - l0 + 1 == n and p1 - p0 + 1 == n, line
            recs.append((l0, p0, n))
    found = int(re.search(r"(\d+) extents? found", out).group(1))
    return recs, found

def dir_files(d):
    """Regular files of d in readdir order."""
    return [e.name for e in os.scandir(d) if e.is_file(follow_symlinks=False)]

def one_dir(d):
    """Jumps and blocks of directory d's own files in readdir order."""
    jumps = blocks = 0
    end = None  # block after the previous run
    for name in dir_files(d):
        path = os.path.join(d, name)
        st = os.lstat(path)
        if st.st_size == 0 or st.st_blocks == 0:
            continue  # not analysed
        recs, found = records(path)
        runs = 0
        prev = None
        for l, p, n in recs:
            # a record continues the run when it starts right after the
            # previous one physically, densely or across a logical hole
            if prev is None or not (p == prev[1] + prev[2] or p == prev[1] + l - prev[0]):
                runs += 1
            prev = (l, p, n)
        assert runs == found, "%s: %d runs counted, filefrag says %d" % (path, runs, found)
        if not recs:
            continue
        blocks += sum(n for _, _, n in recs)
        jumps += runs - 1
        if end is not None and recs[0][1] != end:
            jumps += 1
        end = recs[-1][1] + recs[-1][2]
    return jumps, blocks

def subtree(src, node):
    top = os.path.join(src, node) if node else src
    jumps = blocks = 0
    for d, subdirs, _ in os.walk(top):
        if d == src and "lost+found" in subdirs:
            subdirs.remove("lost+found")  # skipped by the daemon too
        j, b = one_dir(d)
        jumps += j
        blocks += b
    return jumps, blocks

def daemon_order(mnt, node):
    lines = open(os.path.join(mnt, node, "extents")).read().splitlines()[1:]
    return [l.split(" ", 3)[3] for l in lines]

def check(mnt, src, nodes):
    bad = []
    for node in nodes:
        d = os.path.join(src, node) if node else src
        for sub, subdirs, _ in os.walk(d):
            if sub == src and "lost+found" in subdirs:
                subdirs.remove("lost+found")
            rel = os.path.relpath(sub, src)
            if dir_files(sub) != daemon_order(mnt, rel):
                bad.append("%s: readdir order %s, the daemon's %s" % (rel, dir_files(sub), daemon_order(mnt, rel)))
        jumps, blocks = subtree(src, node)
        want = 1 - jumps / blocks if blocks else 1.0
        stats = open(os.path.join(mnt, node, "stats")).read()
        got = re.search(r"^dir_locality: (.*)$", stats, re.M)
        js = json.load(open(os.path.join(mnt, node, "stats.json")))
        if not got or got.group(1) != "%.4f" % want:
            bad.append("/%s: stats says %s, expected %.4f (%d jumps / %d blocks)"
                       % (node, got and got.group(1), want, jumps, blocks))
        if not isinstance(js.get("dir_locality"), float) or round(js["dir_locality"], 4) != round(want, 4):
            bad.append("/%s: stats.json says %r, expected %.4f" % (node, js.get("dir_locality"), want))
        print("/%s %d %d %.4f" % (node, jumps, blocks, want))
    for b in bad:
        print(b, file=sys.stderr)
    sys.exit(1 if bad else 0)

if sys.argv[1] == "write":
    write(sys.argv[2], sys.argv[3], [int(s) for s in sys.argv[4:]])
else:
    check(sys.argv[2], sys.argv[3], sys.argv[4:])
EOF

# Small files come from the allocating CPU's preallocation: one CPU, so
# that files written one after another lie end to end.
dls() { taskset -c 0 python3 "$T/dls.py" "$@"; }

mkdir -p "$SRC/top/seq" "$SRC/top/rev" "$SRC/other"
dls write "$SRC/top/seq" fwd 12 20 8 40 16 4 28
dls write "$SRC/top/rev" rev 12 20 8 40 16 4 28
# Fragmented, sparse, preallocated and empty files among the reversed ones.
"$MKFRAG" frag "$SRC/top/rev" x 2 64 8
"$MKFRAG" sparse "$SRC/top/rev/sparse" 1024
"$MKFRAG" prealloc "$SRC/top/rev/prealloc" 256
: >"$SRC/top/rev/empty"
"$MKFRAG" frag "$SRC/other" y 3 128 16
ln "$SRC/top/seq/f03" "$SRC/other/link"
sync
start_e4infofs

# check_all WHAT: every node of the tree (and a file node) against python.
check_all() {
	local what=$1 out
	out=$(dls check "$MNT" "$SRC" top/seq top/rev top other "") ||
		fail "$what: dir_locality differs from filefrag's (above)"
	log "$what: $(tr '\n' ';' <<<"$out")"
	OUT=$out
}

check_all "initial tree"
# The layouts came out as intended, or the comparison proves little.
check_eq "$(awk '$1 == "/top/seq" { print $2, $4 }' <<<"$OUT")" "0 1.0000" "seq: jumps and dir_locality"
j=$(awk '$1 == "/top/rev" { print $2 }' <<<"$OUT")
[ "$j" -ge 6 ] || fail "rev: $j jumps, expected >= 6 (one between each reversed file)"
# A file node: the figure of a directory holding only it.
runs=$(filefrag_count "$SRC/top/rev/x0")
blocks=$(jq .blocks "$MNT/top/rev/x0/stats.json")
want=$(python3 -c "print('%.4f' % (1 - ($runs - 1) / $blocks))")
check_eq "$(stat_key "$MNT/top/rev/x0/stats" dir_locality)" "$want" "file node x0: dir_locality"
check_eq "$(jq .dir_locality "$MNT/top/rev/empty/stats.json")" 1 "empty file node: dir_locality"

# Changes: the cache must see them. An append lands elsewhere, a file is
# rewritten, one appears, one goes.
head -c 40960 /dev/urandom >>"$SRC/top/seq/f00"
sync "$SRC/top/seq/f00"
dd if=/dev/urandom of="$SRC/top/rev/f02" bs=4k count=5 conv=fsync status=none
head -c 12288 /dev/urandom >"$SRC/top/seq/new" && sync "$SRC/top/seq/new"
rm "$SRC/top/seq/f05"
check_all "after changes"
check "seq: no longer 1 after an append elsewhere" \
	[ "$(awk '$1 == "/top/seq" { print $4 }' <<<"$OUT")" != 1.0000 ]

stop_e4infofs
log "ok"
