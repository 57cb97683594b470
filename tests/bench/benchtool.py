#!/usr/bin/env python3
"""benchtool.py - measuring helpers of tests/bench/run.sh (python3 stdlib).

    benchtool.py layout ROOT
        JSON figures of the regular files under ROOT from FIEMAP: files,
        runs (the sum of filefrag's "N extents found"), fiemap_records,
        blocks, layout_score (Smith & Seltzer), fragmented_files (runs >
        ceil(blocks / 32768)) and their bytes.

    benchtool.py odcopy ROOT SCRATCH
        The physical limit of a defragmenter: copies the bytes of every
        fragmented file under ROOT (runs > ideal, the files a defragmenter
        has to move) to fresh files in SCRATCH (a new directory on the same
        filesystem): each destination is preallocated with posix_fallocate
        to the file's size, then the data is read with O_DIRECT and written
        with O_DIRECT in 4 MiB requests, and the filesystem is synced at the
        end. When the copies would fill half of the free space, they are
        deleted and the filesystem synced before going on (timed too: a
        defragmenter frees old blocks as it goes, and a swiss-cheese
        filesystem has less free space than the data to move). The file
        selection is made first; then the page cache is dropped and only
        the copy, the deletions and the syncs are timed. JSON: seconds,
        files, bytes, releases (how many times copies were deleted).

    benchtool.py fiemap-time FILE
        The kernel's share of re-mapping FILE after a change, in the state
        the daemon's re-read finds it (run with caches dropped): maps FILE
        once, untimed (as the cold scan did), appends 4 KiB to it, then
        maps it 6 times with FIEMAP calls as the daemon makes them
        (FIEMAP_FLAG_SYNC). The first of these also writes the appended
        block back. JSON: records, calls, first_seconds (that first
        mapping, writeback included), seconds (the median of the other 5).

    benchtool.py freefrag IMAGE
    benchtool.py freespace FILE
        Free-space figures, from e2freefrag on an (unmounted) image or
        from a mount's `freespace` file: JSON max_kib (largest free
        extent), free_kib, extents, share_128m (percent of the free blocks
        in extents of 128 MiB or more, from the histogram's power-of-two
        buckets, as e2freefrag counts them).

    benchtool.py verify-same ROOT1 ROOT2
        Exit 0 if both trees hold the same relative paths with the same
        sizes and the same content (sha256), else 1 with a message.
"""

import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fiemap  # noqa: E402

CHUNK = 4 * 1024 * 1024


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def cmd_layout(root):
    print(json.dumps(fiemap.tree_layout(root)))
    return 0


def cmd_odcopy(root, scratch):
    bs = os.statvfs(root).f_bsize
    todo = []
    for path, _st in fiemap.walk_files(root):
        size, blocks, r, _n = fiemap.file_figures(path, bs)
        if r > -(-blocks // 32768):
            todo.append((path, size))
    if os.stat(os.path.dirname(os.path.abspath(scratch))).st_dev != os.stat(root).st_dev:
        print("odcopy: SCRATCH must be on ROOT's filesystem", file=sys.stderr)
        return 2
    vfs = os.statvfs(root)
    budget = vfs.f_bavail * vfs.f_frsize // 2
    drop_caches()
    buf = fiemap.aligned_buffer(CHUNK)
    mv = memoryview(buf)
    total = 0
    pending = []        # copies not deleted yet
    pending_bytes = 0
    releases = 0
    t0 = time.monotonic()
    os.mkdir(scratch)
    for k, (path, size) in enumerate(todo):
        alloc = -(-size // bs) * bs
        if pending and pending_bytes + alloc > budget:
            # A defragmenter frees each file's old blocks as it goes; the
            # copy frees its copies when they would fill half the free
            # space (a swiss-cheese filesystem has less free space than
            # the data to move), and syncs so the blocks can be reused.
            for q in pending:
                os.unlink(q)
            os.sync()
            pending = []
            pending_bytes = 0
            releases += 1
        dst = os.path.join(scratch, f"{k:07d}")
        fi = os.open(path, os.O_RDONLY | os.O_DIRECT | os.O_NOATIME)
        fo = os.open(dst, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_DIRECT, 0o600)
        pending.append(dst)
        pending_bytes += alloc
        try:
            if alloc:
                os.posix_fallocate(fo, 0, alloc)
            off = 0
            while off < size:
                n = os.preadv(fi, [mv], off)
                if n <= 0:
                    break
                w = -(-n // bs) * bs
                if os.pwritev(fo, [mv[:w]], off) != w:
                    raise OSError(f"short O_DIRECT write copying {path}")
                off += n
            if alloc != size:
                os.ftruncate(fo, size)
            total += off
        finally:
            os.close(fi)
            os.close(fo)
    os.sync()
    secs = time.monotonic() - t0
    mv.release()
    buf.close()
    print(json.dumps({"seconds": round(secs, 4), "files": len(todo), "bytes": total,
                      "releases": releases}))
    return 0


def _digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(CHUNK)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def cmd_verify_same(r1, r2):
    def listing(root):
        out = {}
        for path, st in fiemap.walk_files(root):
            out[os.path.relpath(path, root)] = st.st_size
        return out
    a, b = listing(r1), listing(r2)
    if a.keys() != b.keys():
        diff = sorted(set(a) ^ set(b))[:5]
        print(f"verify-same: file lists differ: {diff}", file=sys.stderr)
        return 1
    for rel in sorted(a):
        if a[rel] != b[rel]:
            print(f"verify-same: size of {rel} differs: {a[rel]} != {b[rel]}", file=sys.stderr)
            return 1
        if _digest(os.path.join(r1, rel)) != _digest(os.path.join(r2, rel)):
            print(f"verify-same: content of {rel} differs", file=sys.stderr)
            return 1
    print(json.dumps({"files": len(a), "same": True}))
    return 0


def cmd_fiemap_time(path):
    fiemap.map_seconds(path)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, os.urandom(4096))
    finally:
        os.close(fd)
    first = fiemap.map_seconds(path)[2]
    maps = [fiemap.map_seconds(path) for _ in range(5)]
    n, calls, _ = maps[-1]
    # fixed-point seconds: run.sh's records take no exponent (1.2e-05)
    print(f'{{"records": {n}, "calls": {calls}, "first_seconds": {first:.6f}, '
          f'"seconds": {statistics.median(m[2] for m in maps):.6f}}}')
    return 0


UNITS = {"K": 1, "M": 1024, "G": 1024 ** 2, "T": 1024 ** 3}


def _kib(text):
    """'128M' -> 131072 (KiB)."""
    return int(text[:-1]) * UNITS[text[-1]]


def _share(buckets):
    """buckets: (low_kib, blocks); percent of blocks in buckets >= 128 MiB."""
    total = sum(b for _, b in buckets)
    big = sum(b for lo, b in buckets if lo >= 128 * 1024)
    return round(100.0 * big / total, 2) if total else 0.0


def cmd_freefrag(image):
    out = subprocess.run(["e2freefrag", image], check=True, capture_output=True, text=True).stdout
    fig = {}
    buckets = []
    for line in out.splitlines():
        m = re.match(r"\s*Max\. free extent: (\d+) KB", line)
        if m:
            fig["max_kib"] = int(m.group(1))
        m = re.match(r"\s*Num\. free extent: (\d+)", line)
        if m:
            fig["extents"] = int(m.group(1))
        m = re.match(r"Free blocks: (\d+)", line)
        if m:
            fig["free_blocks"] = int(m.group(1))
        m = re.match(r"Blocksize: (\d+) bytes", line)
        if m:
            fig["bs"] = int(m.group(1))
        m = re.match(r"\s*(\d+[KMGT])\.\.\.\s*\d+[KMGT]-\s*:\s*(\d+)\s+(\d+)", line)
        if m:
            buckets.append((_kib(m.group(1)), int(m.group(3))))
    if "max_kib" not in fig or "free_blocks" not in fig:
        print(f"freefrag: cannot read e2freefrag's output:\n{out}", file=sys.stderr)
        return 1
    print(json.dumps({"max_kib": fig["max_kib"], "extents": fig.get("extents"),
                      "free_kib": fig["free_blocks"] * fig.get("bs", 4096) // 1024,
                      "share_128m": _share(buckets)}))
    return 0


def cmd_freespace(path):
    fig = {}
    buckets = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            k, _, v = line.partition(": ")
            if v:
                fig[k] = int(v)
                continue
            m = re.match(r"(\d+[KMGT])-\d*[KMGT]? (\d+) (\d+) ", line)
            if m:
                buckets.append((_kib(m.group(1)), int(m.group(3))))
    bs = fig.get("block_size", 4096)
    print(json.dumps({"max_kib": fig.get("max_free_extent_kib"), "extents": fig.get("free_extents"),
                      "free_kib": fig.get("total_free_blocks", 0) * bs // 1024,
                      "share_128m": _share(buckets)}))
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "freefrag":
        return cmd_freefrag(argv[2])
    if len(argv) == 3 and argv[1] == "freespace":
        return cmd_freespace(argv[2])
    if len(argv) == 3 and argv[1] == "layout":
        return cmd_layout(argv[2])
    if len(argv) == 4 and argv[1] == "odcopy":
        return cmd_odcopy(argv[2], argv[3])
    if len(argv) == 3 and argv[1] == "fiemap-time":
        return cmd_fiemap_time(argv[2])
    if len(argv) == 4 and argv[1] == "verify-same":
        return cmd_verify_same(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
