#!/usr/bin/env python3
"""Snapshots of files for the defrag tests (no atime is touched: files are
opened with O_NOATIME).

  fsnap.py snap ROOT      one line per regular file under ROOT (lost+found
                          of ROOT skipped), sorted by path:
                          path sha256 atime_ns mtime_ns ctime_ns size holes
                          where holes is the SEEK_DATA/SEEK_HOLE map
                          "start-end,..." of the data segments. The map is
                          taken for every file before any content is read
                          (ext4 reports unwritten ranges as holes only while
                          their pages are not cached: drop caches first).
  fsnap.py holes FILE     the SEEK_DATA/SEEK_HOLE map of one file
  fsnap.py sha FILE       sha256 of one file
"""
import hashlib
import os
import stat
import sys


def holes(path):
    fd = os.open(path, os.O_RDONLY | os.O_NOATIME)
    try:
        size = os.fstat(fd).st_size
        segs = []
        off = 0
        while off < size:
            try:
                start = os.lseek(fd, off, os.SEEK_DATA)
            except OSError:  # ENXIO: no data after off
                break
            end = os.lseek(fd, start, os.SEEK_HOLE)
            segs.append("%d-%d" % (start, end))
            off = end
        return ",".join(segs) or "-"
    finally:
        os.close(fd)


def sha(path):
    fd = os.open(path, os.O_RDONLY | os.O_NOATIME)
    h = hashlib.sha256()
    try:
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            h.update(b)
    finally:
        os.close(fd)
    return h.hexdigest()


def files(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath == root and "lost+found" in dirnames:
            dirnames.remove("lost+found")
        for n in filenames:
            p = os.path.join(dirpath, n)
            if stat.S_ISREG(os.lstat(p).st_mode):
                out.append(p)
    return sorted(out)


def main():
    cmd, arg = sys.argv[1], sys.argv[2]
    if cmd == "holes":
        print(holes(arg))
    elif cmd == "sha":
        print(sha(arg))
    elif cmd == "snap":
        paths = files(arg)
        maps = {p: holes(p) for p in paths}
        for p in paths:
            st = os.lstat(p)
            print(os.path.relpath(p, arg), sha(p), st.st_atime_ns, st.st_mtime_ns,
                  st.st_ctime_ns, st.st_size, maps[p])
    else:
        sys.exit("usage: fsnap.py snap ROOT | holes FILE | sha FILE")


if __name__ == "__main__":
    main()
