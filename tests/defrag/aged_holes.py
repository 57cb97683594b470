#!/usr/bin/env python3
"""An aged filesystem whose free space is all small holes left by deleted
files, for the make-room tests: N files of SIZE KiB written one after the
other (contiguous), the rest of the free space taken by one file (filler),
every other small file deleted (holes of SIZE KiB; with KEEP, all but every
KEEP-th: holes of (KEEP - 1) * SIZE KiB), then a file of MIB MiB written into
those holes.

usage: aged_holes.py DIR N SIZE_KIB MIB [KEEP]"""
import os
import sys


def write(path, size):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        left = size
        while left > 0:
            left -= os.write(fd, os.urandom(min(left, 1 << 20)))
        os.fsync(fd)
    finally:
        os.close(fd)


def fill(path):
    """Every free block into path, as large pieces as fallocate gives."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    off, step = 0, 64 << 20
    while step >= 4096:
        try:
            os.posix_fallocate(fd, off, step)
            off += step
        except OSError:
            step //= 2
    os.fsync(fd)
    os.close(fd)


def main():
    root, n, kib, mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    keep = int(sys.argv[5]) if len(sys.argv) > 5 else 2
    small = os.path.join(root, "small")
    os.makedirs(small, exist_ok=True)
    for i in range(n):
        write(os.path.join(small, "s%05d" % i), kib * 1024)
    fill(os.path.join(root, "filler"))
    for i in (i for i in range(n) if i % keep != keep - 1):
        os.unlink(os.path.join(small, "s%05d" % i))
    os.sync()
    write(os.path.join(root, "F"), mib << 20)
    os.sync()


main()
