#!/usr/bin/env python3
"""Writers racing a defrag job (test_concurrent_writer.sh).

  cwriter.py FILE INITIAL STATUS READY STOP EXPECTED SEED NPROC [MODE]

INITIAL is a copy of FILE's content. NPROC processes write to FILE at the
same time, each in its own stripes (1 MiB slots whose index modulo NPROC is
its number), so their writes never overlap and the result does not depend
on their order. In batches, each overwrites random ranges (1 byte .. 300 KB,
deterministic data from SEED) and process 0 also appends; one fsync per
batch. MODE "dirty" instead writes 64 ranges per batch and never syncs, so
that pages are rewritten while they are still dirty, as a database or a VM
image does (the kernel refuses to move such pages: EBUSY). Before and after
each batch a process reads the job's STATUS file
(the file's defrag node): a batch that starts and ends while the state is
"running" overlapped the job. A process stops once it saw the job running
and no longer running, or when STOP exists, or after 90 s.

The parent creates READY once every process has opened FILE, then replays
every process's writes over INITIAL into EXPECTED, and prints
"batches N overlapped M writes W appended_bytes A".
"""
import os
import random
import struct
import sys
import time

SLOT = 1 << 20


def state(path):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("state: "):
                    return line[7:].strip()
    except OSError as e:
        return "error:%s" % e
    return "?"


def child(k, nproc, path, size, status, stop, log_path, seed, ready_fd, dirty):
    rng = random.Random(seed * 1000 + k)
    fd = os.open(path, os.O_RDWR)
    os.write(ready_fd, b"r")
    os.close(ready_fd)
    log = open(log_path, "wb")
    slots = [s for s in range((size + SLOT - 1) // SLOT) if s % nproc == k]
    eof = size
    batches = overlapped = writes = appended = 0
    seen_running = False
    start = time.monotonic()
    while time.monotonic() - start < 90:
        before = state(status)
        for _ in range(64 if dirty else 4):
            s = rng.choice(slots)
            lo, hi = s * SLOT, min((s + 1) * SLOT, size)
            n = min(rng.choice((1, 100, 4096, 4096, 65536, 300000)), hi - lo)
            off = rng.randrange(lo, hi - n + 1)  # unaligned, inside the slot
            data = rng.randbytes(n)
            os.pwrite(fd, data, off)
            log.write(struct.pack("<QI", off, n) + data)
            writes += 1
        if k == 0:
            n = rng.choice((1, 4096, 10000, 65536))
            data = rng.randbytes(n)
            os.pwrite(fd, data, eof)
            log.write(struct.pack("<QI", eof, n) + data)
            eof += n
            appended += n
            writes += 1
        if not dirty:
            os.fsync(fd)
        after = state(status)
        batches += 1
        if before == "running" and after == "running":
            overlapped += 1
        if "running" in (before, after):
            seen_running = True
        if seen_running and after != "running":
            break
        if os.path.exists(stop):
            break
    os.close(fd)
    log.close()
    with open(log_path + ".sum", "w") as f:
        f.write("%d %d %d %d\n" % (batches, overlapped, writes, appended))


def main():
    path, initial, status, ready, stop, expected_path, seed, nproc = sys.argv[1:9]
    mode = sys.argv[9] if len(sys.argv) > 9 else "fsync"
    if mode not in ("fsync", "dirty"):
        sys.exit("unknown mode %r" % mode)
    seed, nproc = int(seed), int(nproc)
    size = os.path.getsize(initial)
    r, w = os.pipe()
    pids = []
    for k in range(nproc):
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                child(k, nproc, path, size, status, stop, "%s.log%d" % (expected_path, k), seed, w,
                      mode == "dirty")
                os._exit(0)
            except BaseException as e:  # noqa: B036 - report anything, then exit
                print("writer %d: %r" % (k, e), file=sys.stderr)
                os._exit(1)
        pids.append(pid)
    os.close(w)
    got = b""
    while len(got) < nproc:
        b = os.read(r, nproc)
        if not b:
            break
        got += b
    open(ready, "w").close()
    failed = 0
    for pid in pids:
        failed |= os.waitpid(pid, 0)[1] != 0
    if failed:
        sys.exit("a writer process failed")
    with open(initial, "rb") as f:
        expected = bytearray(f.read())
    totals = [0, 0, 0, 0]
    for k in range(nproc):
        lp = "%s.log%d" % (expected_path, k)
        with open(lp, "rb") as f:
            buf = f.read()
        i = 0
        while i < len(buf):
            off, n = struct.unpack_from("<QI", buf, i)
            i += 12
            if off + n > len(expected):
                expected.extend(b"\0" * (off + n - len(expected)))
            expected[off:off + n] = buf[i:i + n]
            i += n
        with open(lp + ".sum") as f:
            totals = [a + int(b) for a, b in zip(totals, f.read().split())]
        os.unlink(lp)
        os.unlink(lp + ".sum")
    with open(expected_path, "wb") as f:
        f.write(expected)
    print("batches %d overlapped %d writes %d appended_bytes %d" % tuple(totals))


if __name__ == "__main__":
    main()
