#!/usr/bin/env python3
"""Directory locality, computed apart from e4infofs (field notes §4): the
regular files directly in DIR in readdir order (os.listdir keeps it), each
one's physical runs from `filefrag -v` in logical order, concatenated; a
jump wherever a run does not start at the block after the previous run's
last one. Prints "jumps blocks dls" (dls = 1 - jumps / blocks, 4 decimals).
With -r, the sums over DIR and every directory below it (each with its own
files in its own order); lost+found is passed over.

usage: dls.py [-r] DIR"""
import os
import re
import subprocess
import sys

REC = re.compile(r"^\s*\d+:\s*\d+\.\.\s*\d+:\s*(\d+)\.\.\s*(\d+):\s*(\d+):")


def runs(path):
    """Physical runs (first, last block) of path, in logical order."""
    out = subprocess.run(["filefrag", "-v", path], capture_output=True, text=True,
                         check=True).stdout
    res = []
    for line in out.splitlines():
        m = REC.match(line)
        if not m:
            continue
        first, last = int(m.group(1)), int(m.group(2))
        if res and first == res[-1][1] + 1:
            res[-1] = (res[-1][0], last)
        else:
            res.append((first, last))
    return res


def one_dir(d):
    jumps = blocks = 0
    prev = None
    for name in os.listdir(d):
        p = os.path.join(d, name)
        if os.path.islink(p) or not os.path.isfile(p):
            continue
        for first, last in runs(p):
            blocks += last - first + 1
            if prev is not None and first != prev + 1:
                jumps += 1
            prev = last
    return jumps, blocks


def main():
    args = sys.argv[1:]
    recursive = args[:1] == ["-r"]
    root = args[-1]
    dirs = [root]
    if recursive:
        dev = os.stat(root).st_dev
        dirs = []
        for d, subs, _ in os.walk(root):
            subs[:] = [s for s in subs if s != "lost+found" and
                       os.stat(os.path.join(d, s)).st_dev == dev]
            dirs.append(d)
    jumps = blocks = 0
    for d in dirs:
        j, b = one_dir(d)
        jumps += j
        blocks += b
    print(jumps, blocks, "%.4f" % (1 - jumps / blocks if blocks else 1))


main()
