#!/usr/bin/env python3
"""age.py - a deterministic, seeded aging generator for the benchmarks.

Builds a fragmented tree in DIR, a directory on a mounted ext4 filesystem
(python3 stdlib only, run as root or as the owner of DIR):

    age.py --corpus a|b|c|flat|deep|small --free contiguous|cheese [--seed N]
           [--scale F] [--manifest FILE] [--cheese-file PATH] DIR
    age.py --corpus a|b|c|flat|deep|small --plan [--seed N] [--scale F]

Corpora (sizes at --scale 1; --scale multiplies file counts of (a) and
sizes of (b) and (c), so --scale 0.005 makes a smoke-sized tree):

  a  100,000 small files of 1-64 KiB (uniform, byte sizes): 10,000 of them
     in one directory big/ (the listing benchmark's directory), the other
     90,000 spread over 999 directories dNN/sMM; about 3.2 GB.
  b  mixed sizes, about 3 GiB in all, in 16 directories: 70% of the files
     4 KiB-1 MiB, 25% 1-32 MiB, 5% 32-256 MiB (log-uniform in each band);
     no file larger than a quarter of the total.
  c  4 large files of 200-500 MiB each, in big/.

Million-file corpora, the shapes of issue 18 (1,000,000 files at --scale 1,
--scale multiplies the file count; files of 1-12 KiB, uniform byte sizes,
about 6.7 GB of data and 8.6 GB allocated, groups of 1, 4 or 8 files
allocated in chunks of 4 KiB, so two- and three-block files interleave):

  flat   directories of 10,000 files each: f00/ .. f99/ (flat/f00 is the
         listing benchmark's directory).
  deep   a binary tree 12 levels deep (d0/d1/.../d0, 4,096 leaf
         directories, 8,190 directories in all) with the files spread over
         its leaves.
  small  many small directories: 10 files each, in 100,000 directories
         sNNN/tNNN (316 x 317 at --scale 1).

How files are fragmented: the files of a directory are sorted by size and
cut into groups (a: 1, 4 or 8 files; b: 1, 2, 4 or 8; c: all 4); a group's
files are created together and allocated with posix_fallocate in chunks of
4-16 KiB (a) or 4-64 KiB (b, c), every chunk size drawn from the seeded RNG,
round-robin across the group, so the files' blocks interleave on disk
(groups of one file stay contiguous). Then each file's data is written over
its preallocated blocks with O_DIRECT pwrites of up to 4 MiB, so the
unwritten extents are converted in this process, in order (a conversion
left to writeback happens whenever anybody's `sync` runs, and can allocate
an extent block that shifts every later allocation: that made full-size
corpora differ between runs). The filesystem is synced at the end.

--free contiguous leaves the free space as it is (contiguous after the
tree). --free cheese then fallocates all the free space into one file
(--cheese-file, default DIR/../.e4bench-cheese: it must be outside DIR, on
the same filesystem) and punches a hole every other 32 KiB of it, so the
free space left is ~32 KiB pieces: every new allocation (a defragmenter's
donor too) is fragmented.

Determinism: the plan (paths, sizes, groups, chunk sizes, content) is a
function of (corpus, seed, scale) only: --plan prints it without touching a
filesystem. Content: byte o of file k is byte (shift_k + o) mod 8 MiB of a
pool of 8 MiB drawn from the seed (shift_k a multiple of 4 KiB; files differ
and are incompressible). The on-disk layout also depends on the filesystem
and the kernel's allocator: on an empty filesystem made with the same mkfs
options (same size, UUID and hash seed, as run.sh makes them) and the same
kernel, the same seed and scale give the same files, sizes, content and
physical run count per file ("the same"; physical addresses are not
compared). The generator pins itself to one CPU (ext4's small-file
preallocation pools are per CPU) and loads every group's bitmap first.
--manifest writes "path size content_shift runs" per file and prints the
manifest's sha256: two runs are the same when the digests are equal.
Checked on kernel 6.18 on a busy machine: corpus a (contiguous) and b and
c (cheese) at full size, each made twice, gave equal digests; with
buffered writes instead of O_DIRECT, corpus a differed in ~3,500 files.

Prints one JSON object on stdout: files, dirs, bytes, seconds, the cheese
figures, the manifest digest.
"""

import argparse
import hashlib
import json
import math
import mmap
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fiemap  # noqa: E402

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
POOL = 8 * MIB
BLOCK = 4096
WRITE = 4 * MIB
SYNC_EVERY = 512 * MIB
HOLE = 32 * KIB


class Plan:
    def __init__(self, corpus, seed, scale):
        self.corpus = corpus
        self.seed = seed
        self.scale = scale
        self.rng = random.Random(f"e4bench:{corpus}:{seed}:{scale!r}")
        self.dirs = []          # relative paths, in creation order
        self.groups = []        # [(dir, [(name, size, shift)], lo, hi)]
        self.listing_dir = None
        self._dirs_seen = set()
        getattr(self, "_plan_" + corpus)()

    # ---- corpora -----------------------------------------------------
    def _plan_a(self):
        rng = self.rng
        n_total = max(200, round(100_000 * self.scale))
        n_big = max(50, round(10_000 * self.scale))
        n_dirs = max(4, round(999 * self.scale))
        top = max(1, round(math.sqrt(n_dirs)))
        per = -(-n_dirs // top)
        others = [f"d{k // per:02d}/s{k % per:02d}" for k in range(n_dirs)]
        self.listing_dir = "big"
        rest = n_total - n_big
        counts = [rest // n_dirs + (1 if k < rest % n_dirs else 0)
                  for k in range(n_dirs)]
        self._add_dir("big", [rng.randint(1 * KIB, 64 * KIB)
                              for _ in range(n_big)], (1, 4, 8), 1, 4)
        for d, c in zip(others, counts):
            self._add_dir(d, [rng.randint(1 * KIB, 64 * KIB)
                              for _ in range(c)], (1, 4, 8), 1, 4)

    def _plan_b(self):
        rng = self.rng
        target = max(4 * MIB, int(3 * GIB * self.scale))
        cap = min(256 * MIB, max(64 * KIB, target // 4))
        bands = ((0.70, 4 * KIB, 1 * MIB), (0.25, 1 * MIB, 32 * MIB),
                 (0.05, 32 * MIB, 256 * MIB))
        sizes = []
        total = 0
        while total < target:
            x = rng.random()
            for p, lo, hi in bands:
                if x < p:
                    break
                x -= p
            s = int(math.exp(rng.uniform(math.log(lo), math.log(hi))))
            s = max(4 * KIB, min(s, cap))
            sizes.append(s)
            total += s
        ndirs = 16
        per_dir = [[] for _ in range(ndirs)]
        for s in sizes:
            per_dir[rng.randrange(ndirs)].append(s)
        for k in range(ndirs):
            self._add_dir(f"m{k:02d}", per_dir[k], (1, 2, 4, 8), 1, 16)

    def _million(self):
        """File sizes of a million-file corpus."""
        n = max(200, round(1_000_000 * self.scale))
        return [self.rng.randint(1 * KIB, 12 * KIB) for _ in range(n)]

    def _spread(self, dirs, sizes):
        """sizes over dirs, as evenly as possible, in order."""
        k = len(dirs)
        per, extra = divmod(len(sizes), k)
        at = 0
        for i, d in enumerate(dirs):
            c = per + (1 if i < extra else 0)
            self._add_dir(d, sizes[at:at + c], (1, 4, 8), 1, 1)
            at += c

    def _plan_flat(self):
        sizes = self._million()
        ndirs = max(1, -(-len(sizes) // 10_000))
        dirs = [f"f{k:02d}" for k in range(ndirs)]
        self.listing_dir = dirs[0]
        self._spread(dirs, sizes)

    def _plan_deep(self):
        sizes = self._million()
        depth = 12 if len(sizes) >= 100_000 else 6
        leaves = ["/".join(f"d{(k >> (depth - 1 - i)) & 1}" for i in range(depth))
                  for k in range(1 << depth)]
        self._spread(leaves, sizes)

    def _plan_small(self):
        sizes = self._million()
        ndirs = max(1, len(sizes) // 10)
        top = max(1, round(math.sqrt(ndirs)))
        per = -(-ndirs // top)
        self._spread([f"s{k // per:03d}/t{k % per:03d}" for k in range(ndirs)], sizes)

    def _plan_c(self):
        rng = self.rng
        sizes = [max(1 * MIB, int(rng.randint(200, 500) * MIB * self.scale)) // (4 * KIB) * (4 * KIB)
                 for _ in range(4)]
        self._add_dir("big", sizes, (4,), 1, 16)

    # ---- helpers -----------------------------------------------------
    def _add_dir(self, d, sizes, group_sizes, lo, hi):
        """Files of one directory: sorted by size, cut into groups."""
        rng = self.rng
        parts = d.split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i])
            if p not in self._dirs_seen:
                self.dirs.append(p)
                self._dirs_seen.add(p)
        sizes = sorted(sizes)
        files = []
        for i, s in enumerate(sizes):
            files.append((f"f{i:05d}", s, rng.randrange(POOL // BLOCK) * BLOCK))
        i = 0
        while i < len(files):
            g = rng.choice(group_sizes)
            self.groups.append((d, files[i:i + g], lo, hi))
            i += g

    def summary(self):
        files = sum(len(g[1]) for g in self.groups)
        data = sum(s for g in self.groups for _n, s, _sh in g[1])
        alloc = sum(-(-s // 4096) * 4096 for g in self.groups for _n, s, _sh in g[1])
        return {"corpus": self.corpus, "seed": self.seed, "scale": self.scale,
                "files": files, "dirs": len(self.dirs), "bytes": data,
                "allocated_bytes": alloc, "listing_dir": self.listing_dir,
                "listing_files": (sum(len(g[1]) for g in self.groups
                                      if g[0] == self.listing_dir)
                                  if self.listing_dir else 0)}


def make_pool(seed):
    """The content pool, page-aligned (for O_DIRECT): POOL bytes from the
    seed, followed by the first WRITE bytes again so any slice of up to
    WRITE bytes starting inside the pool is contiguous."""
    data = random.Random(f"e4bench:content:{seed}").randbytes(POOL)
    buf = mmap.mmap(-1, POOL + WRITE)
    buf[:POOL] = data
    buf[POOL:] = data[:WRITE]
    return memoryview(buf)


def warm_allocator(root):
    """Loads every block group's bitmap and buddy before allocating
    (reading /proc/fs/ext4/DEV/mb_groups does that): a precaution, so the
    allocator's choices never depend on when an asynchronous bitmap
    prefetch completes. Returns the number of groups, or 0 if the file is
    not available."""
    st = os.stat(root)
    try:
        dev = os.path.basename(os.readlink(
            f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"))
        with open(f"/proc/fs/ext4/{dev}/mb_groups") as f:
            return max(0, sum(1 for _ in f) - 1)
    except OSError:
        return 0


def build(plan, root):
    pool = make_pool(plan.seed)
    rng = plan.rng  # continues the plan's stream: chunk sizes
    os.makedirs(root, exist_ok=True)
    for d in plan.dirs:
        os.mkdir(os.path.join(root, d))
    written = 0
    since_sync = 0
    for d, files, lo, hi in plan.groups:
        fds = []
        try:
            for name, _s, _sh in files:
                fds.append(os.open(os.path.join(root, d, name),
                                   os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_CLOEXEC | os.O_DIRECT,
                                   0o644))
            done = [0] * len(files)
            left = len(files)
            while left:
                for i, (_n, size, _sh) in enumerate(files):
                    if done[i] >= size:
                        continue
                    c = min(4 * KIB * rng.randint(lo, hi), size - done[i])
                    os.posix_fallocate(fds[i], done[i], c)
                    done[i] += c
                    if done[i] >= size:
                        left -= 1
            # O_DIRECT writes: the unwritten extents are converted in this
            # process before the write returns, never by a writeback worker
            # at a time someone else's sync chooses (such a late conversion
            # can allocate an extent block and shift every later
            # allocation). The last block is written whole and the file cut
            # back to its size.
            for i, (_n, size, shift) in enumerate(files):
                off = 0
                while off < size:
                    n = min(WRITE, size - off)
                    n = -(-n // BLOCK) * BLOCK
                    p = (shift + off) % POOL
                    w = os.pwrite(fds[i], pool[p:p + n], off)
                    if w != n:
                        raise OSError(f"short write to {files[i][0]}")
                    off += n
                if off != size:
                    os.ftruncate(fds[i], size)
                written += size
                since_sync += size
        finally:
            for fd in fds:
                os.close(fd)
        if since_sync >= SYNC_EVERY:
            os.sync()
            since_sync = 0
    os.sync()
    return written


def cheese(path):
    """Fill all free space into path, then punch every other 32 KiB."""
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_CLOEXEC, 0o600)
    try:
        bs = os.fstatvfs(fd).f_bsize
        off = 0
        step = 64 * MIB
        while step >= bs:
            try:
                os.posix_fallocate(fd, off, step)
                off += step
            except OSError as e:
                if e.errno != 28:  # ENOSPC
                    raise
                step //= 2
        end = off
        punch = 0x02 | 0x01  # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
        holes = 0
        for o in range(0, end, 2 * HOLE):
            if libc.fallocate(fd, punch, o, min(HOLE, end - o)) != 0:
                e = ctypes.get_errno()
                raise OSError(e, f"punch {path}: {os.strerror(e)}")
            holes += 1
        os.fsync(fd)
    finally:
        os.close(fd)
    return {"cheese_file": path, "cheese_filled_bytes": end, "cheese_holes": holes}


def manifest(plan, root, out):
    bs = os.statvfs(root).f_bsize
    h = hashlib.sha256()
    tot_runs = 0
    with open(out, "w") as f:
        for d, files, _lo, _hi in plan.groups:
            for name, size, shift in files:
                rel = f"{d}/{name}"
                _sz, _blocks, r, _n = fiemap.file_figures(os.path.join(root, rel), bs)
                line = f"{rel}\t{size}\t{shift}\t{r}\n"
                tot_runs += r
                f.write(line)
                h.update(line.encode())
    return {"manifest": out, "manifest_sha256": h.hexdigest(), "runs": tot_runs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--corpus", choices=("a", "b", "c", "flat", "deep", "small"), required=True)
    ap.add_argument("--free", choices=("contiguous", "cheese"), default="contiguous")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--plan", action="store_true", help="print the plan's summary, touch nothing")
    ap.add_argument("--manifest", help="write the per-file manifest here")
    ap.add_argument("--cheese-file", help="default: DIR/../.e4bench-cheese")
    a = ap.parse_args()
    if a.scale <= 0:
        ap.error("--scale must be > 0")
    plan = Plan(a.corpus, a.seed, a.scale)
    if a.plan:
        print(json.dumps(plan.summary()))
        return 0
    if not a.dir:
        ap.error("DIR is required")
    root = os.path.abspath(a.dir)
    if os.path.exists(root) and os.listdir(root):
        ap.error(f"{root} exists and is not empty")
    cheese_path = os.path.abspath(a.cheese_file or os.path.join(os.path.dirname(root), ".e4bench-cheese"))
    if cheese_path == root or cheese_path.startswith(root + "/"):
        ap.error("--cheese-file must be outside DIR")
    try:
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
    except OSError:
        pass
    t0 = time.monotonic()
    os.makedirs(root, exist_ok=True)
    groups = warm_allocator(root)
    build(plan, root)
    out = plan.summary()
    out["groups_loaded"] = groups
    if a.free == "cheese":
        if os.stat(os.path.dirname(cheese_path)).st_dev != os.stat(root).st_dev:
            ap.error("--cheese-file must be on DIR's filesystem")
        out.update(cheese(cheese_path))
    os.sync()
    out["free"] = a.free
    out["seconds"] = round(time.monotonic() - t0, 3)
    if a.manifest:
        out.update(manifest(plan, root, a.manifest))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
