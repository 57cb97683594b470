#!/usr/bin/env python3
"""Checks the e4infofs_* samples of a Prometheus scrape against a mount.

    prom_check.py SCRAPE_FILE MOUNT SOURCE [COPY_FILE]

SCRAPE_FILE is what node_exporter served at /metrics; MOUNT the e4infofs
mount whose `metrics` was copied to its textfile directory; SOURCE the
e4infofs SOURCE as given (the `source` label). Checks:

- node_textfile_scrape_error is 0 (node_exporter parsed the copy);
- the gauges e4infofs_score, _files, _runs, _layout_score and
  _fragmented_files have a sample for dir="." and one per top-level
  directory of SOURCE (labels: source, dir; dir is the name escaped as in
  every e4infofs output), equal to the directory's `score` and `stats`;
- the counters and e4infofs_defrag_files_total for each outcome are
  there, with the right # TYPE, without a dir label (examples/node-exporter.sh
  adds the source label; the samples of other sources are ignored);
- with COPY_FILE (the .prom file node_exporter read): the scrape has
  exactly its e4infofs_* series (those of SOURCE), with the same values.

Prints the counters as "name{labels} value" lines on stdout (without the
source label; integral values as integers, not node_exporter's 2.097152e+06) (for the
caller to compare before/after), problems on stderr, exit 1 on any.
"""
import os
import re
import sys

GAUGES = {  # metric -> stats key
    "e4infofs_score": "score",
    "e4infofs_files": "files",
    "e4infofs_runs": "runs",
    "e4infofs_layout_score": "layout_score",
    "e4infofs_fragmented_files": "fragmented_files",
}
COUNTERS = ["e4infofs_scans_total", "e4infofs_inspections_total", "e4infofs_revalidations_total",
            "e4infofs_dir_opens_total",
            "e4infofs_defrag_jobs_total", "e4infofs_defrag_files_total",
            "e4infofs_defrag_bytes_moved_total", "e4infofs_defrag_seconds_total"]
OUTCOMES = ["improved", "optimal", "no-gain", "skipped", "failed", "cancelled"]
RESERVED = {b"score", b"extents", b"stats", b"stats.json", b"report", b"metrics", b"defrag",
            b"jobs", b"freespace", b"plan", b"map.svg", b"map.png", b"index.html",
            b"map-before.svg", b"map-before.png"}

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)')


def unescape_label(v):
    out, i = [], 0
    while i < len(v):
        c = v[i]
        if c == "\\":
            n = v[i + 1]
            out.append({"\\": "\\", '"': '"', "n": "\n"}[n])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def parse(text):
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ", 3)
            types[name] = typ
            continue
        if not line or line.startswith("#"):
            continue
        m = LINE.match(line)
        if not m:
            raise SystemExit("unparsable line in the scrape: %r" % line)
        name, labels_text, value = m.groups()
        labels = {}
        rest = labels_text or ""
        while rest:
            lm = LABEL.match(rest)
            if not lm:
                raise SystemExit("unparsable labels in %r" % line)
            labels[lm.group(1)] = unescape_label(lm.group(2))
            rest = rest[lm.end():]
        samples[(name, tuple(sorted(labels.items())))] = (float(value), line)
    return samples, types


def e4escape(name: bytes) -> str:
    """The escaping of names in every e4infofs output (docs/files.md)."""
    out, s = [], name.decode("utf-8", "surrogateescape")
    for ch in s:
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif 0xDC80 <= o <= 0xDCFF:
            out.append("\\x%02x" % (o - 0xDC00))
        elif o < 0x20 or o == 0x7F:
            out.append("\\x%02x" % o)
        else:
            out.append(ch)
    return "".join(out)


def mirror(name: bytes) -> bytes:
    return b"@" + name if name in RESERVED or name.startswith(b"@") else name


def stats_of(path: bytes):
    d = {}
    with open(os.path.join(path, b"stats"), "rb") as f:
        for line in f.read().decode().splitlines():
            k, _, v = line.partition(": ")
            d[k] = v
    return d


def main():
    scrape, mount, source = sys.argv[1], sys.argv[2].encode(), sys.argv[3]
    all_samples, types = parse(open(scrape).read())
    bad = []
    # The samples of this SOURCE (and node_exporter's own).
    samples = {k: v for k, v in all_samples.items()
               if not k[0].startswith("e4infofs_") or dict(k[1]).get("source", source) == source}

    err = samples.get(("node_textfile_scrape_error", ()))
    if err is None or err[0] != 0:
        bad.append("node_textfile_scrape_error is %r (node_exporter could not parse the copy)" % (err,))

    # Top-level directories of SOURCE (a directory's mirror has `report`).
    src = source.encode()
    if not os.path.isdir(src):  # a device as SOURCE: its mount point
        raise SystemExit("SOURCE must be a directory here")
    dirs = {".": mount}
    for name in os.listdir(src):
        p = os.path.join(src, name)
        if name == b"lost+found" or os.path.islink(p) or not os.path.isdir(p):
            continue
        if os.stat(p).st_dev != os.stat(src).st_dev:
            continue
        dirs[e4escape(name)] = os.path.join(mount, mirror(name))

    for metric, key in GAUGES.items():
        if types.get(metric) != "gauge":
            bad.append("%s: # TYPE %r, expected gauge" % (metric, types.get(metric)))
        got = {dict(lbl).get("dir"): (v, line) for (n, lbl), (v, line) in samples.items() if n == metric}
        for (n, lbl), (v, line) in samples.items():
            if n == metric and set(dict(lbl)) != {"source", "dir"}:
                bad.append("%s: labels must be source and dir: %s" % (metric, line))
            if n == metric and dict(lbl).get("source") != source:
                bad.append("%s: source label is not %r: %s" % (metric, source, line))
        if set(got) != set(dirs):
            bad.append("%s: dir labels %s, expected %s" % (metric, sorted(got), sorted(dirs)))
        for label, path in dirs.items():
            if label not in got:
                continue
            st = stats_of(path)
            want = float(st[key])
            v, line = got[label]
            if abs(v - want) > 1e-9:
                bad.append("%s: %s but %r has %s: %s" % (line, v, path, st[key], key))
        # score is also the score file.
    for label, path in dirs.items():
        v = samples.get(("e4infofs_score", tuple(sorted({"source": source, "dir": label}.items()))))
        with open(os.path.join(path, b"score")) as f:
            s = int(f.read())
        if v is None or v[0] != s:
            bad.append("e4infofs_score of %r: %r, score file %d" % (label, v, s))

    counters = []
    for metric in COUNTERS:
        if types.get(metric) != "counter":
            bad.append("%s: # TYPE %r, expected counter" % (metric, types.get(metric)))
        got = {tuple(x for x in lbl if x[0] != "source"): (v, line)
               for (n, lbl), (v, line) in samples.items() if n == metric}
        if metric == "e4infofs_defrag_files_total":
            want = {(("outcome", o),) for o in OUTCOMES}
        else:
            want = {()}
        if set(got) != want:
            bad.append("%s: label sets %s, expected %s" % (metric, sorted(got), sorted(want)))
        for lbl, (v, line) in sorted(got.items()):
            if v < 0:
                bad.append("negative counter: " + line)
            series = metric + ("{%s}" % ",".join('%s="%s"' % kv for kv in lbl) if lbl else "")
            counters.append("%s %s" % (series, int(v) if v == int(v) else v))

    if len(sys.argv) > 4:
        copy, _ = parse(open(sys.argv[4]).read())
        mine = {k: v for k, v in samples.items() if k[0].startswith("e4infofs_")}
        if set(copy) != set(mine):
            bad.append("series of the scrape and of %s differ: %s"
                       % (sys.argv[4], sorted(set(copy) ^ set(mine))))
        for k, (v, line) in mine.items():
            if k in copy and abs(copy[k][0] - v) > 1e-9:
                bad.append("%s: the copy has %s" % (line, copy[k][1]))

    for b in bad:
        print(b, file=sys.stderr)
    print("\n".join(counters))
    print("prom_check: %d e4infofs samples, %d directories, %d problems"
          % (sum(1 for (n, _) in samples if n.startswith("e4infofs_")), len(dirs), len(bad)), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
