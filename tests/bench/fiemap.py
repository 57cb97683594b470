"""FIEMAP helpers of the benchmarks (python3 stdlib only).

    records(fd)        [(logical, physical, length, flags)] in bytes, every
                       FIEMAP record of an open file (FIEMAP_FLAG_SYNC)
    map_seconds(path)  (records, calls, seconds) of mapping a file with
                       FIEMAP as the daemon does (584 records per call,
                       FIEMAP_FLAG_SYNC), reading only what the loop needs
                       of each batch: the kernel's share of a re-read
    runs(recs)         physical runs, counted as filefrag counts "N extents
                       found": a record continues the run when it starts
                       where the previous one ended physically (also across a
                       hole, where the physical gap equals the logical one)
    walk_files(root)   regular files under root (same filesystem, no symlink
                       followed, root's lost+found skipped), each inode once,
                       in readdir order (like find)
"""

import fcntl
import os
import stat
import struct
import time

FS_IOC_FIEMAP = 0xC020660B
FIEMAP_FLAG_SYNC = 0x1
FIEMAP_EXTENT_LAST = 0x1
_HDR = struct.Struct("=QQIIII")          # struct fiemap (32 bytes)
_EXT = struct.Struct("=QQQQQIIII")       # struct fiemap_extent (56 bytes)
_BATCH = 512


_DAEMON_BATCH = 584  # core/fiemap.c's BATCH


def _batches(fd, batch):
    """Yields (buf, mapped) for each FIEMAP call (FIEMAP_FLAG_SYNC) over
    the whole file, batch records at a time, the last one possibly empty;
    buf is reused by the next call. Unpacks only the last record of each
    batch, to go on."""
    buf = bytearray(_HDR.size + _EXT.size * batch)
    start = 0
    while True:
        _HDR.pack_into(buf, 0, start, 0xFFFFFFFFFFFFFFFF - start,
                       FIEMAP_FLAG_SYNC, 0, batch, 0)
        fcntl.ioctl(fd, FS_IOC_FIEMAP, buf, True)
        mapped = _HDR.unpack_from(buf, 0)[3]
        yield buf, mapped
        if mapped == 0:
            return
        lo, _ph, ln, _r1, _r2, fl, _a, _b, _c = _EXT.unpack_from(
            buf, _HDR.size + (mapped - 1) * _EXT.size)
        if fl & FIEMAP_EXTENT_LAST:
            return
        start = lo + ln


def records(fd):
    out = []
    for buf, mapped in _batches(fd, _BATCH):
        for i in range(mapped):
            lo, ph, ln, _r1, _r2, fl, _a, _b, _c = _EXT.unpack_from(
                buf, _HDR.size + i * _EXT.size)
            out.append((lo, ph, ln, fl))
    return out


def map_seconds(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        n = calls = 0
        t0 = time.perf_counter()
        for _buf, mapped in _batches(fd, _DAEMON_BATCH):
            calls += 1
            n += mapped
        return n, calls, time.perf_counter() - t0
    finally:
        os.close(fd)


def runs(recs):
    n = 0
    prev = None
    for lo, ph, ln, _fl in recs:
        if prev is None:
            n = 1
        else:
            plo, pph, pln = prev
            dense = pph + pln
            sparse = pph + (lo - plo)
            if ph != dense and ph != sparse:
                n += 1
        prev = (lo, ph, ln)
    return n


def walk_files(root):
    """Yields (path, stat) of every regular file under root, each inode
    once, not crossing filesystems, skipping root/lost+found."""
    root_st = os.lstat(root)
    dev = root_st.st_dev
    seen = set()
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            it = os.scandir(d)
        except OSError:
            continue
        subdirs = []
        with it:
            for e in it:
                if d == root and e.name == "lost+found":
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if st.st_dev != dev:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    subdirs.append(e.path)
                elif stat.S_ISREG(st.st_mode):
                    if st.st_nlink > 1:
                        if st.st_ino in seen:
                            continue
                        seen.add(st.st_ino)
                    yield e.path, st
        stack.extend(reversed(subdirs))


def file_figures(path, block_size):
    """(size, blocks, runs, records) of one file."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NOATIME)
    try:
        recs = records(fd)
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    blocks = sum(r[2] for r in recs) // block_size
    return size, blocks, runs(recs), len(recs)


def tree_layout(root):
    """Figures of a tree: files, runs (sum of filefrag counts), fiemap
    records, blocks, layout score (Smith & Seltzer: 1 - sum(runs-1) /
    sum(blocks-1) over files of >= 2 blocks), fragmented files (runs > ideal
    = ceil(blocks / 32768))."""
    bs = os.statvfs(root).f_bsize
    files = 0
    tot_runs = 0
    tot_recs = 0
    tot_blocks = 0
    num = 0
    den = 0
    fragmented = 0
    size_fragmented = 0
    for path, _st in walk_files(root):
        files += 1
        size, blocks, r, nrec = file_figures(path, bs)
        tot_runs += r
        tot_recs += nrec
        tot_blocks += blocks
        if blocks >= 2:
            num += r - 1
            den += blocks - 1
        ideal = -(-blocks // 32768)
        if r > ideal:
            fragmented += 1
            size_fragmented += size
    return {
        "files": files,
        "runs": tot_runs,
        "fiemap_records": tot_recs,
        "blocks": tot_blocks,
        "block_size": bs,
        "layout_score": (1.0 - num / den) if den else 1.0,
        "fragmented_files": fragmented,
        "fragmented_bytes": size_fragmented,
    }


def aligned_buffer(size):
    """A page-aligned writable buffer (for O_DIRECT)."""
    import mmap
    return mmap.mmap(-1, size)

