#!/usr/bin/env python3
"""Pixel checks of e4infofs's map pictures, with no module beyond the
standard library (PNG decoded here with zlib: 8-bit RGB or RGBA, not
interlaced, every filter type; binary PPM, P6, for screenshots).

  pngcheck.py size FILE        "WIDTH HEIGHT"
  pngcheck.py bands FILE       bands along the middle row of a file map's
                               strip (x 16..783, y 130): runs of one of the
                               three run colours, holes not counted. A
                               picture of another width (a thumbnail) is
                               read at that scale, colours within NEAR
  pngcheck.py cells FILE       directory map: cells per class,
                               "fragmented contiguous other free"
  pngcheck.py classes FILE     pixels near each class colour, any scale
                               (a directory map's thumbnail),
                               "fragmented contiguous other free"
  pngcheck.py strips FILE      file maps drawn anywhere in FILE (a
                               screenshot of a file manager): one line
                               "x y w h bands" per area of run colours at
                               least 24 pixels wide, bands counted along
                               its row with the most run pixels
  pngcheck.py colours FILE     distinct colours
  pngcheck.py chunks FILE      chunk types in order, then the file size

The geometry and colours are core/map.h's.
"""
import struct
import sys
import zlib

RUNS = {(0xE6, 0x9F, 0x00), (0x56, 0xB4, 0xE9), (0x00, 0x9E, 0x73)}
CLASSES = [(0xD5, 0x5E, 0x00), (0x00, 0x72, 0xB2), (0x8C, 0x8C, 0x8C), (0xE4, 0xE4, 0xE4)]
STRIP_X, STRIP_W, STRIP_Y, STRIP_H = 16, 768, 80, 100
COLS, ROWS, CELL, GRID_X, GRID_Y = 64, 32, 12, 16, 64
MAP_W = 800
# A scaled picture blends neighbouring bands at their edges: a pixel is
# of a palette colour when every channel is within NEAR of it.
NEAR = 10


def chunks(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    off = 8
    while off < len(data):
        n, kind = struct.unpack(">I4s", data[off:off + 8])
        body = data[off + 8:off + 8 + n]
        crc = struct.unpack(">I", data[off + 8 + n:off + 12 + n])[0]
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == crc, "bad CRC in %r" % kind
        yield kind.decode(), body
        off += 12 + n


def header(path):
    data = open(path, "rb").read(33)
    return struct.unpack(">II", data[16:24])


def decode_ppm(data):
    """Binary PPM (P6, maxval 255): what `import ppm:FILE` writes."""
    fields, off = [], 2
    while len(fields) < 3:
        while data[off:off + 1].isspace():
            off += 1
        if data[off:off + 1] == b"#":
            off = data.index(b"\n", off)
            continue
        end = off
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(int(data[off:end]))
        off = end
    w, h, maxval = fields
    assert maxval == 255, "unsupported PPM"
    pix = data[off + 1:off + 1 + w * h * 3]
    return w, h, lambda x, y: tuple(pix[(y * w + x) * 3:(y * w + x) * 3 + 3])


def decode(path, last_row=None):
    """Pixels of rows 0..last_row (all by default): px(x, y) -> (r, g, b)."""
    data = open(path, "rb").read()
    if data[:2] == b"P6":
        return decode_ppm(data)
    idat = b""
    for kind, body in chunks(data):
        if kind == "IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, "unsupported PNG"
        elif kind == "IDAT":
            idat += body
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, off = [], bytearray(stride), 0
    for _ in range(h if last_row is None else min(h, last_row + 1)):
        f = raw[off]
        line = bytearray(raw[off + 1:off + 1 + stride])
        off += 1 + stride
        if f == 2:
            line = bytearray((x + y) & 0xFF for x, y in zip(line, prev))
        for i in range(stride if f in (1, 3, 4) else 0):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 0xFF
        rows.append(line)
        prev = line
    return w, h, lambda x, y: tuple(rows[y][x * bpp:x * bpp + 3])


_NEAR = {}


def near(c, palette):
    """The colour of palette within NEAR of c, or None (a table of every
    colour near the palette, made once: pixels are many)."""
    key = id(palette)  # RUNS or CLASSES, module constants
    table = _NEAR.get(key)
    if table is None:
        table = _NEAR[key] = {}
        span = range(-NEAR, NEAR + 1)
        for p in palette:
            for dr in span:
                for dg in span:
                    for db in span:
                        table[(p[0] + dr, p[1] + dg, p[2] + db)] = p
    return table.get(c)


def count_bands(px, xs, y):
    """Bands of run colours along row y over xs: a band is a stretch of
    one run colour; pixels of no run colour (holes, blended edges)
    between two stretches of one colour do not split it."""
    n, last = 0, None
    for x in xs:
        c = near(px(x, y), RUNS)
        if c is not None:
            if c != last:
                n += 1
            last = c
    return n


def bands(w, px):
    s = w / MAP_W
    y = int((STRIP_Y + STRIP_H / 2) * s)
    return count_bands(px, range(int(STRIP_X * s + 1), int((STRIP_X + STRIP_W) * s - 1)), y)


def classes(w, h, px):
    count = [0, 0, 0, 0]
    for y in range(h):
        for x in range(w):
            c = near(px(x, y), CLASSES)
            if c is not None:
                count[CLASSES.index(c)] += 1
    return count


def strips(w, h, px, block=4, min_w=24):
    """Areas of run colours: blocks of block x block pixels holding any
    run-coloured pixel, joined when they touch (8 ways)."""
    hit = set()
    for y in range(h):
        for x in range(w):
            if near(px(x, y), RUNS):
                hit.add((x // block, y // block))
    out = []
    while hit:
        todo, area = [hit.pop()], []
        while todo:
            bx, by = todo.pop()
            area.append((bx, by))
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    n = (bx + dx, by + dy)
                    if n in hit:
                        hit.remove(n)
                        todo.append(n)
        x0 = min(b[0] for b in area) * block
        x1 = min(w, (max(b[0] for b in area) + 1) * block)
        y0 = min(b[1] for b in area) * block
        y1 = min(h, (max(b[1] for b in area) + 1) * block)
        if x1 - x0 < min_w:
            continue
        row = max(range(y0, y1), key=lambda y: sum(1 for x in range(x0, x1) if near(px(x, y), RUNS)))
        out.append((x0, y0, x1 - x0, y1 - y0, count_bands(px, range(x0, x1), row)))
    return sorted(out)


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "chunks":
        data = open(path, "rb").read()
        print(" ".join(k for k, _ in chunks(data)), len(data))
        return
    if cmd == "size":
        print(*header(path))
        return
    last = None
    if cmd == "cells":
        last = GRID_Y + ROWS * CELL
    elif cmd == "bands" and open(path, "rb").read(2) != b"P6":
        last = int((STRIP_Y + STRIP_H / 2) * header(path)[0] / MAP_W)
    w, h, px = decode(path, last)
    if cmd == "bands":
        print(bands(w, px))
    elif cmd == "classes":
        print(*classes(w, h, px))
    elif cmd == "strips":
        for s in strips(w, h, px):
            print(*s)
    elif cmd == "cells":
        count = [0, 0, 0, 0]
        for i in range(COLS * ROWS):
            c = px(GRID_X + i % COLS * CELL + CELL // 2, GRID_Y + i // COLS * CELL + CELL // 2)
            if c in CLASSES:
                count[CLASSES.index(c)] += 1
        print(*count)
    elif cmd == "colours":
        print(len({px(x, y) for y in range(h) for x in range(w)}))
    else:
        sys.exit("unknown command " + cmd)


main()
