#!/usr/bin/env python3
"""Writes and opens for the hardening tests, each printing what it got:
"ok" (or "ok:N" for a write of N bytes) or the errno's name (EINVAL, ...).

  hw.py write FILE [--trunc] [--off N] PART...
      Opens FILE O_WRONLY (with O_TRUNC when asked; without it, like bash's
      "1<>"), then writes each PART with one write(2) (pwrite at N for the
      first PART when --off is given). PARTs are Python string escapes
      ("1", "\\n", "\\x00"). Prints one word per write, space-separated (a
      failed write does not stop the next ones). If the open fails, prints
      its errno alone.
  hw.py writefile FILE DATA_FILE [--off N]
      One write(2) (pwrite at N) of the whole content of DATA_FILE.
  hw.py open FILE FLAGS
      open(2) with FLAGS among r, w, rw, trunc, creat; prints ok or the errno.
  hw.py hold NPROC PER SECONDS READY PATHS_FILE SEED
      Forks NPROC processes; each opens PER paths picked at random from
      PATHS_FILE (one a line) for reading and keeps them open, reads one
      byte of each; once all have, creates READY; each sleeps SECONDS, then
      reads its files to EOF and closes them. Prints "ok:N" (N files read to
      the end, in all) or "ERR path errno" lines.
  hw.py remount_ro DIR SECONDS
      Tries mount(2) with MS_REMOUNT | MS_RDONLY on DIR in a tight loop
      (ext4 refuses with EBUSY while a file is open for writing) until it
      succeeds or SECONDS passed. Prints "ok TRIES MS" or "ERRNO TRIES MS".
"""
import ctypes
import errno
import os
import random
import sys
import time


def ename(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def unescape(s):
    return s.encode("latin-1").decode("unicode_escape").encode("latin-1")


def cmd_write(args):
    path = args.pop(0)
    trunc = False
    off = None
    parts = []
    i = 0
    while i < len(args):
        if args[i] == "--trunc":
            trunc = True
        elif args[i] == "--off":
            i += 1
            off = int(args[i])
        else:
            parts.append(unescape(args[i]))
        i += 1
    try:
        fd = os.open(path, os.O_WRONLY | (os.O_TRUNC if trunc else 0))
    except OSError as e:
        print(ename(e))
        return
    out = []
    for k, p in enumerate(parts):
        try:
            n = os.pwrite(fd, p, off) if (k == 0 and off is not None) else os.write(fd, p)
            out.append("ok:%d" % n)
        except OSError as e:
            out.append(ename(e))
    try:
        os.close(fd)
    except OSError as e:
        out.append("close:" + ename(e))
    print(" ".join(out))


def cmd_writefile(args):
    path, data_file = args[0], args[1]
    off = int(args[3]) if len(args) > 3 and args[2] == "--off" else None
    with open(data_file, "rb") as f:
        data = f.read()
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as e:
        print(ename(e))
        return
    try:
        n = os.pwrite(fd, data, off) if off is not None else os.write(fd, data)
        print("ok:%d" % n)
    except OSError as e:
        print(ename(e))
    finally:
        os.close(fd)


def cmd_open(args):
    path, flags = args[0], args[1].split(",")
    f = 0
    f |= os.O_RDWR if "rw" in flags else os.O_WRONLY if "w" in flags else os.O_RDONLY
    f |= os.O_TRUNC if "trunc" in flags else 0
    f |= os.O_CREAT if "creat" in flags else 0
    try:
        os.close(os.open(path, f, 0o644))
        print("ok")
    except OSError as e:
        print(ename(e))


def holder(paths, secs, wfd):
    fds = []
    errs = []
    for p in paths:
        try:
            fd = os.open(p, os.O_RDONLY)
            os.read(fd, 1)
            fds.append((p, fd))
        except OSError as e:
            errs.append("ERR %s %s" % (p, ename(e)))
    os.write(wfd, b"r")
    time.sleep(secs)
    n = 0
    for p, fd in fds:
        try:
            while os.read(fd, 65536):
                pass
            n += 1
        except OSError as e:
            errs.append("ERR %s %s" % (p, ename(e)))
        os.close(fd)
    os.write(wfd, ("%d\n" % n + "".join(e + "\n" for e in errs)).encode())


def cmd_hold(args):
    nproc, per, secs, ready, paths_file, seed = args
    nproc, per, secs = int(nproc), int(per), float(secs)
    with open(paths_file) as f:
        paths = f.read().split("\n")[:-1]
    rng = random.Random(seed)
    pipes = []
    for _ in range(nproc):
        mine = rng.sample(paths, per)
        r, w = os.pipe()
        if os.fork() == 0:
            os.close(r)
            try:
                holder(mine, secs, w)
            finally:
                os._exit(0)
        os.close(w)
        pipes.append(r)
    for r in pipes:
        if os.read(r, 1) != b"r":
            print("ERR a holder died")
    open(ready, "w").close()
    total = 0
    errs = []
    for r in pipes:
        out = b""
        while True:
            b = os.read(r, 65536)
            if not b:
                break
            out += b
        os.close(r)
        lines = out.decode().splitlines()
        if not lines:
            errs.append("ERR a holder died")
            continue
        total += int(lines[0])
        errs += lines[1:]
    while True:
        try:
            os.wait()
        except ChildProcessError:
            break
    for e in errs:
        print(e)
    if not errs:
        print("ok:%d" % total)


def cmd_remount_ro(args):
    path, secs = args[0].encode(), float(args[1])
    libc = ctypes.CDLL(None, use_errno=True)
    ms_rdonly, ms_remount = 1, 32
    t0 = time.monotonic()
    tries = 0
    err = 0
    while True:
        tries += 1
        if libc.mount(b"none", path, None, ms_remount | ms_rdonly, None) == 0:
            err = 0
            break
        err = ctypes.get_errno()
        if err != errno.EBUSY or time.monotonic() - t0 > secs:
            break
    ms = int((time.monotonic() - t0) * 1000)
    print("%s %d %d" % ("ok" if err == 0 else errno.errorcode.get(err, str(err)), tries, ms))


def main():
    cmds = {"write": cmd_write, "writefile": cmd_writefile, "open": cmd_open, "hold": cmd_hold,
            "remount_ro": cmd_remount_ro}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
