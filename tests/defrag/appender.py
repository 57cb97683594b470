#!/usr/bin/env python3
"""Writers for test_autodefrag.sh. Every chunk's bytes are derived from the
file's name and the chunk's index, so what a file must hold can be
computed again without reading it.

  appender.py interleave DIR N CHUNK_KIB COUNT
        appends COUNT chunks to each of DIR/f0 .. DIR/f{N-1}, round robin,
        each append an open, write, fsync and close: the files' blocks
        interleave.
  appender.py steady FILE HELPER PERIOD SECONDS HELPER_SECONDS CHUNK_KIB
        appends a chunk to FILE every PERIOD seconds (fsync each) for
        SECONDS; during the first HELPER_SECONDS also one to HELPER after
        each of FILE's, so that FILE's blocks interleave with HELPER's.
        Prints the number of chunks FILE got.
  appender.py expect NAME COUNT CHUNK_KIB
        sha256 of what a file named NAME must hold after COUNT chunks.
  appender.py tar N DIRS
        an uncompressed tar of N small files (0 to 3 KiB, random data) in
        DIRS directories, on stdout.
"""
import hashlib
import io
import os
import random
import sys
import tarfile
import time


def chunk(name, i, size):
    seed = hashlib.sha256(f"{name}:{i}".encode()).digest()
    return (seed * (size // len(seed) + 1))[:size]


def append(path, i, size):
    """One append as a logger that reopens its file does it: open, write,
    fsync, close. The close drops the file's block preallocation (ext4
    keeps one per inode open for writing, which would keep an appended
    file contiguous), so the next append is placed afresh."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, chunk(os.path.basename(path), i, size))
        os.fsync(fd)
    finally:
        os.close(fd)


def interleave(d, n, kib, count):
    paths = [os.path.join(d, f"f{k}") for k in range(n)]
    for i in range(count):
        for path in paths:
            append(path, i, kib * 1024)


def steady(path, helper, period, seconds, helper_seconds, kib):
    start = time.monotonic()
    i = 0
    while time.monotonic() - start < seconds:
        append(path, i, kib * 1024)
        if time.monotonic() - start < helper_seconds:
            append(helper, i, kib * 1024)
        i += 1
        time.sleep(max(0.0, start + i * period - time.monotonic()))
    print(i)


def expect(name, count, kib):
    h = hashlib.sha256()
    for i in range(count):
        h.update(chunk(name, i, kib * 1024))
    print(h.hexdigest())


def make_tar(n, dirs):
    rng = random.Random(17)
    out = tarfile.open(fileobj=sys.stdout.buffer, mode="w|")
    for d in range(dirs):
        info = tarfile.TarInfo(f"d{d}")
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        out.addfile(info)
    for k in range(n):
        data = rng.randbytes(rng.randrange(0, 3072))
        info = tarfile.TarInfo(f"d{k % dirs}/file{k}")
        info.size = len(data)
        info.mode = 0o644
        info.mtime = 1700000000
        out.addfile(info, io.BytesIO(data))
    out.close()


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "interleave":
        interleave(args[0], int(args[1]), int(args[2]), int(args[3]))
    elif cmd == "steady":
        steady(args[0], args[1], float(args[2]), float(args[3]), float(args[4]), int(args[5]))
    elif cmd == "expect":
        expect(args[0], int(args[1]), int(args[2]))
    elif cmd == "tar":
        make_tar(int(args[0]), int(args[1]))
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
