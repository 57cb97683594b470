#!/usr/bin/env python3
"""Directory locality, computed apart from e4infofs (docs/files.md,
"dir_locality"): the regular files directly in DIR in readdir order
(os.scandir keeps it), each one's physical runs from `filefrag -v` in
logical order, concatenated; a jump wherever a run does not start at the
block after the previous run's last one. A record continues its file's run
when it starts right after the previous record physically, or where the
previous one would reach across a logical hole (filefrag's rule, checked
against its "N extents found"). Files of size 0 are passed over, as
e4infofs does. Prints "jumps blocks dls" (dls = 1 - jumps / blocks, 4
decimals, 1 without blocks), a line per DIR. With -r, the sums over DIR and
every directory below it on its filesystem (each with its own files in its
own order); lost+found is passed over in the filesystem's root directory
only.

usage: dls.py [-r] DIR..."""
import os
import re
import subprocess
import sys

REC = re.compile(r"^\s*\d+:\s*(\d+)\.\.\s*(\d+):\s*(\d+)\.\.\s*(\d+):\s*(\d+):")


def runs(path):
    """Physical runs (first, end) of path in logical order, end the block
    after the run."""
    out = subprocess.run(["filefrag", "-v", path], capture_output=True, text=True,
                         check=True).stdout
    res = []
    prev = None  # (logical, physical) of the previous record
    for line in out.splitlines():
        m = REC.match(line)
        if not m:
            continue
        logical, _, first, last, length = map(int, m.groups())
        if res and (first == res[-1][1] or first == prev[1] + logical - prev[0]):
            res[-1] = (res[-1][0], last + 1)
        else:
            res.append((first, last + 1))
        prev = (logical, first)
    found = re.search(r"(\d+) extents? found", out)
    if found and int(found.group(1)) != len(res):
        sys.exit("dls.py: %s: %d runs, filefrag says %s" % (path, len(res), found.group(0)))
    return res


def one_dir(d):
    jumps = blocks = 0
    end = None
    for e in os.scandir(d):
        if not e.is_file(follow_symlinks=False) or e.stat(follow_symlinks=False).st_size == 0:
            continue
        for first, after in runs(e.path):
            blocks += after - first
            if end is not None and first != end:
                jumps += 1
            end = after
    return jumps, blocks


def subtree(root):
    """root and the directories below it on its filesystem."""
    dev = os.stat(root).st_dev
    for d, subs, _ in os.walk(root):
        subs[:] = [s for s in subs
                   if not (s == "lost+found" and os.path.ismount(d)) and
                   os.stat(os.path.join(d, s)).st_dev == dev]
        yield d


def main():
    args = sys.argv[1:]
    recursive = args[:1] == ["-r"]
    for root in args[recursive:]:
        jumps = blocks = 0
        for d in subtree(root) if recursive else [root]:
            j, b = one_dir(d)
            jumps += j
            blocks += b
        print(jumps, blocks, "%.4f" % (1 - jumps / blocks if blocks else 1))


main()
