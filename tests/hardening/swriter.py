#!/usr/bin/env python3
"""A writer of the stress test (test_stress.sh), and its checker.

  swriter.py run DIR SEED SECONDS MANIFEST
      For SECONDS, changes the files of DIR and DIR/sub (only this writer
      touches them) at random: creates files (1 byte .. 3 MiB, written in
      16-64 KiB pieces with an fsync after each, so writers running at the
      same time interleave their blocks and fragment each other), appends,
      overwrites ranges, truncates (shorter or longer), punches holes,
      preallocates past EOF, renames (also over an existing file, and
      between DIR and DIR/sub), deletes. It keeps the expected content of
      every file in memory, and at the end writes MANIFEST: one line
      "path size sha256" per file (path relative to DIR), and prints
      "ops N creates N ... bytes N".
  swriter.py check DIR MANIFEST
      The regular files below DIR must be exactly those of MANIFEST, with
      that size and content. Prints "ok N files" or what differs (exit 1).
"""
import ctypes
import hashlib
import os
import random
import sys
import time

MAX_FILES = 10
MAX_SIZE = 3 << 20
FALLOC_FL_KEEP_SIZE = 1
FALLOC_FL_PUNCH_HOLE = 2
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]


def fallocate(fd, mode, off, length):
    if libc.fallocate(fd, mode, off, length) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


class Writer:
    def __init__(self, root, seed):
        self.root = root
        self.rng = random.Random(seed)
        self.files = {}  # relative path -> bytearray
        self.counts = {}
        self.serial = 0
        self.bytes = 0
        os.makedirs(os.path.join(root, "sub"), exist_ok=True)

    def path(self, rel):
        return os.path.join(self.root, rel)

    def new_name(self):
        self.serial += 1
        return self.rng.choice(("", "sub/")) + "f%d" % self.serial

    def data(self, n):
        self.bytes += n
        return self.rng.randbytes(n)

    def count(self, op):
        self.counts[op] = self.counts.get(op, 0) + 1

    def pick(self):
        return self.rng.choice(sorted(self.files))

    def op_create(self):
        rel = self.new_name()
        size = self.rng.choice((1, 4095, 4096, 65536, 300000, 1 << 20, 1500000, MAX_SIZE))
        content = bytearray()
        fd = os.open(self.path(rel), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            while len(content) < size:
                piece = self.data(min(self.rng.randrange(16, 65, 16) * 1024, size - len(content)))
                os.write(fd, piece)
                content += piece
                os.fsync(fd)
        finally:
            os.close(fd)
        self.files[rel] = content

    def op_append(self):
        rel = self.pick()
        c = self.files[rel]
        n = min(self.rng.choice((1, 4096, 20000, 65536, 200000)), MAX_SIZE - len(c))
        if n <= 0:
            return self.op_truncate()
        fd = os.open(self.path(rel), os.O_WRONLY | os.O_APPEND)
        try:
            piece = self.data(n)
            os.write(fd, piece)
            c += piece
            if self.rng.random() < 0.7:
                os.fsync(fd)
        finally:
            os.close(fd)

    def op_overwrite(self):
        rel = self.pick()
        c = self.files[rel]
        if not c:
            return self.op_append()
        off = self.rng.randrange(len(c))
        n = min(self.rng.choice((1, 100, 4096, 65536, 300000)), len(c) - off)
        piece = self.data(n)
        fd = os.open(self.path(rel), os.O_WRONLY)
        try:
            os.pwrite(fd, piece, off)
            if self.rng.random() < 0.5:
                os.fsync(fd)
        finally:
            os.close(fd)
        c[off:off + n] = piece

    def op_truncate(self):
        rel = self.pick()
        c = self.files[rel]
        size = self.rng.randrange(0, min(len(c) * 2 + 8192, MAX_SIZE) + 1)
        os.truncate(self.path(rel), size)
        if size < len(c):
            del c[size:]
        else:
            c += b"\0" * (size - len(c))

    def op_punch(self):
        rel = self.pick()
        c = self.files[rel]
        if len(c) < 8192:
            return self.op_overwrite()
        off = self.rng.randrange(0, len(c) - 4096)
        n = min(self.rng.choice((4096, 16384, 100000)), len(c) - off)
        fd = os.open(self.path(rel), os.O_WRONLY)
        try:
            fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, n)
        finally:
            os.close(fd)
        c[off:off + n] = b"\0" * n

    def op_prealloc(self):
        rel = self.pick()
        c = self.files[rel]
        fd = os.open(self.path(rel), os.O_WRONLY)
        try:
            fallocate(fd, FALLOC_FL_KEEP_SIZE, len(c), self.rng.choice((4096, 65536, 262144)))
        finally:
            os.close(fd)

    def op_rename(self):
        rel = self.pick()
        if self.rng.random() < 0.3 and len(self.files) > 1:
            dst = self.rng.choice([f for f in sorted(self.files) if f != rel])  # replaces it
        else:
            dst = self.new_name()
        os.rename(self.path(rel), self.path(dst))
        self.files[dst] = self.files.pop(rel)

    def op_delete(self):
        rel = self.pick()
        os.unlink(self.path(rel))
        del self.files[rel]

    def step(self):
        if len(self.files) < 3:
            op = "create"
        else:
            op = self.rng.choices(
                ("create", "append", "overwrite", "truncate", "punch", "prealloc", "rename", "delete"),
                (3 if len(self.files) < MAX_FILES else 0, 4, 4, 2, 1, 1, 2, 2 if len(self.files) > 4 else 0))[0]
        getattr(self, "op_" + op)()
        self.count(op)

    def manifest(self, path):
        with open(path, "w") as f:
            for rel in sorted(self.files):
                c = self.files[rel]
                f.write("%s %d %s\n" % (rel, len(c), hashlib.sha256(c).hexdigest()))


def run(root, seed, secs, manifest):
    w = Writer(root, int(seed))
    end = time.monotonic() + float(secs)
    ops = 0
    while time.monotonic() < end:
        w.step()
        ops += 1
    w.manifest(manifest)
    print("ops %d %s bytes %d files %d" % (
        ops, " ".join("%s %d" % kv for kv in sorted(w.counts.items())), w.bytes, len(w.files)))


def check(root, manifest):
    want = {}
    with open(manifest) as f:
        for line in f:
            rel, size, sha = line.split()
            want[rel] = (int(size), sha)
    have = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            have[os.path.relpath(p, root)] = p
    bad = []
    for rel in sorted(set(want) | set(have)):
        if rel not in have:
            bad.append("%s: missing" % rel)
        elif rel not in want:
            bad.append("%s: not expected" % rel)
        else:
            with open(have[rel], "rb") as f:
                data = f.read()
            if len(data) != want[rel][0]:
                bad.append("%s: size %d, expected %d" % (rel, len(data), want[rel][0]))
            elif hashlib.sha256(data).hexdigest() != want[rel][1]:
                bad.append("%s: content differs" % rel)
    if bad:
        print("\n".join(bad))
        sys.exit(1)
    print("ok %d files" % len(want))


def main():
    if len(sys.argv) >= 6 and sys.argv[1] == "run":
        run(*sys.argv[2:6])
    elif len(sys.argv) >= 4 and sys.argv[1] == "check":
        check(*sys.argv[2:4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
