#!/usr/bin/env python3
"""The window after `fusermount3 -u MNT`: milliseconds from its return
until SRC (the filesystem under the daemon) can be unmounted, timed to the
start of the umount2 call that succeeded (the unmount's own work, a
journal commit, is not the daemon's). Prints the figure; the filesystem
is unmounted when it returns.

usage: window.py MNT SRC [BUDGET_S]"""
import ctypes
import errno
import subprocess
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)


def main():
    mnt, src = sys.argv[1], sys.argv[2]
    budget = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    subprocess.run(["fusermount3", "-u", mnt], check=True)
    t0 = time.monotonic()
    while True:
        start = time.monotonic()
        if libc.umount2(src.encode(), 0) == 0:
            print("%.2f" % ((start - t0) * 1000))
            return 0
        err = ctypes.get_errno()
        if err != errno.EBUSY or start - t0 > budget:
            print("umount %s: %s after %.0f ms" % (src, errno.errorcode.get(err, err),
                                                   (start - t0) * 1000), file=sys.stderr)
            return 1
        time.sleep(0.0002)


sys.exit(main())
