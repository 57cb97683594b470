#!/usr/bin/env python3
"""Compares e4infofs's `freespace` with `e2freefrag DEVICE`.

    freefrag_cmp.py FREESPACE_FILE E2FREEFRAG_OUTPUT_FILE

Prints one line per difference and exits 1 if there is any, else prints
a one-line summary and exits 0. The histogram rows of e2freefrag
("    4K...    8K-  :   N   N   P%") are compared with freespace's
"4K-8K N N P" (the last bucket, "...max", as "X-max"; e2freefrag's
"512K...1024K-" as "512K-1M").
"""
import re
import sys


def parse_freespace(text):
    keys, rows, header = {}, [], None
    for line in text.splitlines():
        if line.startswith("#"):
            header = line
            continue
        m = re.fullmatch(r"([a-z_]+): (\S+)", line)
        if m:
            keys[m.group(1)] = m.group(2)
            continue
        f = line.split()
        if len(f) == 4:
            rows.append((f[0], f[1], f[2], f[3].rstrip("%")))
            continue
        raise SystemExit(f"unexpected freespace line: {line!r}")
    return keys, rows, header


UNITS = "KMGTPEZY"


def normalize(size):
    """e2freefrag ends the last bucket of a unit as 1024 of it ("512K...1024K-"):
    the same bound is written here as 1 of the next unit ("1M")."""
    if size != "max" and size[:-1] == "1024" and size[-1] in UNITS[:-1]:
        return "1" + UNITS[UNITS.index(size[-1]) + 1]
    return size


def parse_e2freefrag(text):
    keys, rows = {}, []
    pats = {
        "block_size": r"Blocksize: (\d+) bytes",
        "total_free_blocks": r"Free blocks: (\d+) ",
        "min_free_extent_kib": r"Min\. free extent: (\d+) KB",
        "max_free_extent_kib": r"Max\. free extent: (\d+) KB",
        "avg_free_extent_kib": r"Avg\. free extent: (\d+) KB",
        "free_extents": r"Num\. free extent: (\d+)",
    }
    for k, p in pats.items():
        m = re.search(p, text)
        if not m:
            raise SystemExit(f"no {k} in e2freefrag output:\n{text}")
        keys[k] = m.group(1)
    for m in re.finditer(r"^\s*(\d+[KMGTPEZY])\.\.\.\s*(\d+[KMGTPEZY]-|max)\s*:\s*(\d+)\s+(\d+)\s+([\d.]+)%$",
                         text, re.M):
        end = normalize(m.group(2).rstrip("-"))
        rows.append((f"{m.group(1)}-{end}", m.group(3), m.group(4), m.group(5)))
    return keys, rows


def main():
    fs_text = open(sys.argv[1]).read()
    e2_text = open(sys.argv[2]).read()
    fs_keys, fs_rows, header = parse_freespace(fs_text)
    e2_keys, e2_rows = parse_e2freefrag(e2_text)
    errors = []
    if header is None or header.split() != "# extent_size_range free_extents free_blocks percent".split():
        errors.append(f"histogram header: {header!r}")
    for k, v in e2_keys.items():
        if fs_keys.get(k) != v:
            errors.append(f"{k}: freespace {fs_keys.get(k)!r}, e2freefrag {v!r}")
    extra = set(fs_keys) - set(e2_keys)
    if extra:
        errors.append(f"freespace has unexpected keys {sorted(extra)}")
    if fs_rows != e2_rows:
        errors.append(f"histogram rows differ:\n  freespace:  {fs_rows}\n  e2freefrag: {e2_rows}")
    if errors:
        print("\n".join(errors))
        return 1
    print(f"{fs_keys['free_extents']} free extents, {fs_keys['total_free_blocks']} free blocks, "
          f"{len(fs_rows)} histogram rows: same as e2freefrag")
    return 0


if __name__ == "__main__":
    sys.exit(main())
