#!/usr/bin/env python3
"""A reader of the stress test (test_stress.sh).

  sreader.py MNT SECONDS SEED

For SECONDS, walks the mount at random from its root (listing directories,
stepping into directories and files' directories) and reads every
attribute file (every regular file) of each node it visits: score, stats,
stats.json, extents, defrag, report of a directory, metrics, jobs and
freespace at the root. Checks the content's form (score:
one integer 0-100; stats.json: JSON with the keys of stats; extents: a
header and "runs: N"; defrag: "state: ..."). Prints
"reads N listings N errors {errno: count}" and, for each unexpected error
or malformed content (at most 20), a line "BAD path: why"; exits 1 if
there was any. Expected errors: ENOENT and ESTALE (a writer deleted or
renamed what was listed a moment before).
"""
import errno
import json
import os
import random
import sys
import time

EXPECTED = {errno.ENOENT, errno.ESTALE}


def check_form(name, text):
    # Pictures and pages: binary or padded, no final newline.
    if name.endswith(".png"):
        return None if text[1:4] == "PNG" else "not a PNG: %r" % text[:8]
    if name.endswith(".svg"):
        return None if "<svg" in text[:400] else "no <svg in %r" % text[:40]
    if name == "index.html":
        return None if "<html" in text[:400].lower() else "no <html in %r" % text[:40]
    if not text.endswith("\n"):
        return "no final newline"
    if name == "score":
        v = text.strip()
        if not v.isdigit() or not 0 <= int(v) <= 100:
            return "score %r" % v
    elif name == "stats.json":
        try:
            obj = json.loads(text)
        except ValueError as e:
            return "not JSON: %s" % e
        if "score" not in obj or "files" not in obj:
            return "JSON without score/files"
    elif name in ("stats", "plan"):
        if not text.startswith("files: "):
            return "%s starts with %r" % (name, text[:20])
    elif name == "extents":
        if not text.startswith("# "):
            return "extents starts with %r" % text[:20]
    elif name in ("defrag",):
        if not text.startswith("state: "):
            return "defrag starts with %r" % text[:20]
    elif name == "jobs":
        if not text.startswith("# inode"):
            return "jobs starts with %r" % text[:20]
    return None


def main():
    mnt, secs, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    end = time.monotonic() + secs
    reads = listings = 0
    errors = {}
    bad = []

    def err(path, e):
        name = errno.errorcode.get(e.errno, str(e.errno))
        errors[name] = errors.get(name, 0) + 1
        if e.errno not in EXPECTED:
            bad.append("%s: %s" % (path, name))

    def read(path, name):
        nonlocal reads
        try:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            reads += 1
        except OSError as e:
            err(path, e)
            return
        why = check_form(name, text)
        if why:
            bad.append("%s: %s" % (path, why))

    while time.monotonic() < end and len(bad) < 20:
        node = mnt
        for _ in range(7):  # a random descent from the root
            try:
                with os.scandir(node) as it:
                    entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
                listings += 1
            except OSError as e:
                err(node, e)
                break
            # Regular files are the node's attribute files; directories
            # are directories and files of the source.
            for name, is_dir in entries:
                if not is_dir:
                    read(os.path.join(node, name), name)
            subs = [name for name, is_dir in entries if is_dir]
            if not subs:
                break
            node = os.path.join(node, rng.choice(subs))
    print("reads %d listings %d errors %s" % (reads, listings, json.dumps(errors, sort_keys=True)))
    for b in bad[:20]:
        print("BAD " + b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
