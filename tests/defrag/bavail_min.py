#!/usr/bin/env python3
"""Samples the space available to others on a filesystem (statvfs f_bavail,
bytes) as fast as it can until STOPFILE exists, then prints
"first min samples": the first sample, the smallest, and how many. Creates
READYFILE once the first sample is taken.

usage: bavail_min.py PATH STOPFILE READYFILE"""
import os
import sys


def bavail(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def main():
    path, stop, ready = sys.argv[1], sys.argv[2], sys.argv[3]
    first = low = bavail(path)
    open(ready, "w").close()
    n = 1
    while not os.path.exists(stop):
        b = bavail(path)
        low = min(low, b)
        n += 1
    print(first, low, n)


if __name__ == "__main__":
    main()
