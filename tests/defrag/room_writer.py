#!/usr/bin/env python3
"""Writers to the files a compaction moves out of the way (test_room_hold).

  room_writer.py DIR STOPFILE READYFILE SEED

Maps every regular file directly in DIR (FIEMAP), creates READYFILE, then
until STOPFILE exists overwrites random ranges (1 byte .. the file's size,
deterministic data from SEED) of random files, fsyncing every 64 writes,
and keeps what each file must hold. Then it checks every file against
that, maps them again, and prints
"written W moved M written_and_moved B mismatched X": files written,
files whose blocks moved, files both, files whose content is wrong."""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import fiemap  # noqa: E402


def physical(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        return [r[1] for r in fiemap.records(fd)]
    finally:
        os.close(fd)


def main():
    d, stop, ready, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    names = sorted(n for n in os.listdir(d) if os.path.isfile(os.path.join(d, n)))
    paths = [os.path.join(d, n) for n in names]
    before = {p: physical(p) for p in paths}
    model = {}
    for p in paths:
        with open(p, "rb") as f:
            model[p] = bytearray(f.read())
    fds = {p: os.open(p, os.O_WRONLY) for p in paths}
    rng = random.Random(seed)
    written = set()
    open(ready, "w").close()
    n = 0
    while not os.path.exists(stop):
        p = rng.choice(paths)
        size = len(model[p])
        if size == 0:
            continue
        off = rng.randrange(size)
        length = rng.randint(1, size - off)
        data = rng.randbytes(length)
        os.pwrite(fds[p], data, off)
        model[p][off:off + length] = data
        written.add(p)
        n += 1
        if n % 64 == 0:
            os.fsync(fds[p])
    for fd in fds.values():
        os.fsync(fd)
        os.close(fd)
    moved = {p for p in paths if physical(p) != before[p]}
    bad = 0
    for p in paths:
        with open(p, "rb") as f:
            if f.read() != bytes(model[p]):
                bad += 1
    print("written %d moved %d written_and_moved %d mismatched %d"
          % (len(written), len(moved), len(written & moved), bad))


main()
