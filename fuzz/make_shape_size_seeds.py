#!/usr/bin/env python3
"""Writes the seeds of fuzz/shape_size_fuzz.cpp: the shapes that once wrapped a size ([N, 2^62+16],
[N, 2^31, 2^31]), ordinary image and token shapes, and each op of the target's graph once.

The input layout (shape_size_fuzz.cpp): rank byte, per dimension a selector byte (even: 8 bytes of a
little-endian int64 follow; odd: one byte), the element size byte, the batch byte, then the graph: the
parameter count byte and that many int64s, the weight rank byte and its dimension bytes, the op byte and
the op's attribute int64s."""
import os
import struct

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shape_size_seeds")


def dims(values):
    out = bytes([len(values)])
    for v in values:
        out += bytes([0]) + struct.pack("<q", v)
    return out


def graph(op, params=(), weight=(), attributes=()):
    out = bytes([len(params)]) + b"".join(struct.pack("<q", p) for p in params)
    out += bytes([len(weight)]) + bytes(weight)
    out += bytes([op]) + b"".join(struct.pack("<q", a) for a in attributes)
    return out


SEEDS = {
    "wraps_to_64_bytes": dims([1, 2**62 + 16]) + bytes([2, 0]) + graph(0),
    "wraps_to_zero": dims([1, 2**31, 2**31]) + bytes([2, 3]) + graph(0),
    "image": dims([-1, 3, 224, 224]) + bytes([2, 7]) + graph(6, weight=[8, 3, 3, 3], attributes=[3, 3, 1, 1]),
    "tokens_tile": dims([-1, 128]) + bytes([3, 1]) + graph(1, params=[1, 2**40]),
    "reshape": dims([-1, 16, 16]) + bytes([2, 0]) + graph(2, params=[-1, 2**33]),
    "matmul": dims([-1, 64, 8]) + bytes([2, 1]) + graph(5, weight=[8, 8]),
    "pool": dims([-1, 8, 32, 32]) + bytes([2, 0]) + graph(10, attributes=[2**62, 2**62, 1, 1]),
}

os.makedirs(HERE, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
