"""Byte-level mutation of a file, weighted toward its flatbuffer tables."""

from __future__ import annotations

import random


def table_ranges(model: bytes) -> list[tuple[int, int]]:
    """Byte ranges of the flatbuffer's tables (tensors, operators, codes,
    quantization, buffers' headers) found through the ``tflite`` readers."""
    import tflite

    ranges: list[tuple[int, int]] = []
    try:
        m = tflite.Model.GetRootAsModel(model, 0)
        ranges.append((m._tab.Pos - 8, m._tab.Pos + 40))
        for i in range(m.OperatorCodesLength()):
            pos = m.OperatorCodes(i)._tab.Pos
            ranges.append((pos - 16, pos + 16))
        for s in range(m.SubgraphsLength()):
            g = m.Subgraphs(s)
            ranges.append((g._tab.Pos - 8, g._tab.Pos + 32))
            for i in range(g.TensorsLength()):
                t = g.Tensors(i)
                ranges.append((t._tab.Pos - 16, t._tab.Pos + 32))
                if t.ShapeLength():
                    start = t._tab.Vector(t._tab.Offset(4))
                    ranges.append((start - 4, start + 4 * t.ShapeLength()))
                q = t.Quantization()
                if q is not None:
                    ranges.append((q._tab.Pos - 16, q._tab.Pos + 32))
            for i in range(g.OperatorsLength()):
                op = g.Operators(i)
                ranges.append((op._tab.Pos - 16, op._tab.Pos + 40))
        for i in range(m.BuffersLength()):
            pos = m.Buffers(i)._tab.Pos
            ranges.append((pos - 8, pos + 16))
    except Exception:  # noqa: BLE001 - a seed the reader cannot walk just gets uniform mutation
        pass
    n = len(model)
    return [(max(0, a), min(n, b)) for a, b in ranges if min(n, b) > max(0, a)]

_INTERESTING32 = [0, 1, 2, 3, 4, 7, 8, 16, 127, 128, 255, 256, 0x7FFF, 0xFFFF, 0x7FFFFFFF, -1, -2, -128,
                  -(2**31), 2**31 - 1]


def _pick_pos(rng: random.Random, n: int, ranges: list[tuple[int, int]]) -> int:
    if ranges and rng.random() < 0.8:
        a, b = rng.choice(ranges)
        pos = rng.randrange(a, b)
        if pos < n:  # earlier steps of this case may have shortened the file
            return pos
    return rng.randrange(n)


def mutate_bytes(model: bytes, rng: random.Random, ranges: list[tuple[int, int]]) -> tuple[bytes, str]:
    data = bytearray(model)
    steps = []
    for _ in range(rng.choice([1, 1, 1, 2, 3, 5])):
        if not data:
            break
        kind = rng.choice(["flip", "byte", "word", "word", "insert", "delete", "truncate"])
        pos = _pick_pos(rng, len(data), ranges)
        if kind == "flip":
            data[pos] ^= 1 << rng.randrange(8)
        elif kind == "byte":
            data[pos] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        elif kind == "word":
            pos -= pos % 4
            value = rng.choice(_INTERESTING32 + [rng.randrange(-(2**31), 2**31), len(data), len(data) - 4])
            data[pos:pos + 4] = (value & 0xFFFFFFFF).to_bytes(4, "little")
        elif kind == "insert":
            data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.choice([1, 4, 8])))
        elif kind == "delete":
            del data[pos:pos + rng.choice([1, 4, 8])]
        elif kind == "truncate" and rng.random() < 0.3:
            del data[pos:]
        steps.append(f"{kind}@{pos}")
    return bytes(data), "bytes:" + ",".join(steps)
