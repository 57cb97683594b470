#!/usr/bin/env python3
"""Pixel checks of e4infofs's map pictures, with no module beyond the
standard library (PNG decoded here with zlib: 8-bit RGB or RGBA, not
interlaced, every filter type).

  pngcheck.py size FILE        "WIDTH HEIGHT"
  pngcheck.py bands FILE       bands along the middle row of a file map's
                               strip (x 16..783, y 130): runs of one of the
                               three run colours, holes not counted
  pngcheck.py cells FILE       directory map: cells per class,
                               "fragmented contiguous other free"
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


def decode(path, last_row=None):
    """Pixels of rows 0..last_row (all by default): px(x, y) -> (r, g, b)."""
    data = open(path, "rb").read()
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


def bands(px):
    y = STRIP_Y + STRIP_H // 2
    n, last = 0, None
    for x in range(STRIP_X, STRIP_X + STRIP_W):
        c = px(x, y)
        if c in RUNS:
            if c != last:
                n += 1
            last = c
    return n


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "chunks":
        data = open(path, "rb").read()
        print(" ".join(k for k, _ in chunks(data)), len(data))
        return
    if cmd == "size":
        print(*header(path))
        return
    last = {"bands": STRIP_Y + STRIP_H // 2, "cells": GRID_Y + ROWS * CELL}.get(cmd)
    w, h, px = decode(path, last)
    if cmd == "bands":
        print(bands(px))
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
