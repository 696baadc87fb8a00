"""TRANSPOSE, SLICE, STRIDED_SLICE and BROADCAST_TO: one strided copy each.

Every output element ``out[i0, ..., ik]`` is ``in[offset + sum(i_d * strides[d])]``:
TRANSPOSE permutes the input's strides, SLICE and STRIDED_SLICE start at an
offset and step by (possibly negative) strides, BROADCAST_TO repeats a
dimension with stride 0.  The Prepare of each is TFLM's (``transpose.cc``,
``slice.cc``, ``strided_slice_common.cc`` with its ``StartForAxis`` and
``StopForAxis``, ``broadcast_to.cc``); values are moved, never rescaled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops import _movement as m
from tvmdevice.ops._base import INT32, SHAPE_TYPES, OpData, Operand, Signature

__all__ = ["CopyData", "TRANSPOSE_SIGNATURE", "SLICE_SIGNATURE", "STRIDED_SLICE_SIGNATURE", "BROADCAST_TO_SIGNATURE",
           "MAX_RANKS", "validate", "analyze"]

TRANSPOSE_SIGNATURE = Signature((Operand("input", m.MOVABLE), Operand("perm", INT32, constant=True)),
                                (Operand("output", m.MOVABLE),))
SLICE_SIGNATURE = Signature((Operand("input", m.MOVABLE), Operand("begin", SHAPE_TYPES, constant=True),
                             Operand("size", SHAPE_TYPES, constant=True)), (Operand("output", m.MOVABLE),))
STRIDED_SLICE_SIGNATURE = Signature(
    (Operand("input", m.MOVABLE), Operand("begin", INT32, constant=True), Operand("end", INT32, constant=True),
     Operand("strides", INT32, constant=True)), (Operand("output", m.MOVABLE),),
    ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask", "offset"))
BROADCAST_TO_SIGNATURE = Signature((Operand("input", m.MOVABLE), Operand("shape", SHAPE_TYPES, constant=True)),
                                   (Operand("output", m.MOVABLE),))

#: The highest input rank TFLM's kernel of each operator takes.
MAX_RANKS = {"TRANSPOSE": 5, "SLICE": 5, "STRIDED_SLICE": 4, "BROADCAST_TO": 5}

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


@dataclass(frozen=True)
class CopyData(OpData):
    """A strided copy: ``out[i] = in[offset + sum(i[d] * strides[d])]`` over ``out_shape``.

    :ivar strides: input element strides per output dimension (0 repeats, < 0 walks backwards).
    :ivar offset: the input element of output element 0.
    :ivar itemsize: bytes per element (1 for int8, 2 for int16).
    """

    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    itemsize: int


def _rank_limit(op: Operator, rank: int) -> None:
    limit = MAX_RANKS[op.type]
    if rank > limit:
        raise c.refuse(op, f"{op.type} supports up to {limit} dimensions, the input has {rank}")


# ------------------------------------------------------------------ TRANSPOSE
def _transpose(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, CopyData]:
    (inp, perm_t), _, out = c.operands(graph, op, 2)
    shape = m.dims(inp)
    m.require_vector(op, perm_t, "perm")  # TFLM's transpose_common.cc
    perm = m.constant_ints(op, perm_t, "perm", len(shape))
    if sorted(perm) != list(range(len(shape))):
        raise c.malformed(op, f"perm {list(perm)} is not a permutation of {len(shape)} dimensions")
    c.check_shape(op, out, [shape[p] for p in perm], "output")
    in_strides = m.row_major_strides(shape)
    return inp, out, CopyData(op.index, op.type, shape, m.dims(out), tuple(in_strides[p] for p in perm), 0,
                              np.dtype(inp.dtype).itemsize)


# ---------------------------------------------------------------------- SLICE
def _slice(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, CopyData]:
    (inp, begin_t, size_t), _, out = c.operands(graph, op, 3)
    shape = m.dims(inp)
    if np.dtype(begin_t.dtype) != np.dtype(size_t.dtype):
        raise c.malformed(op, "begin and size tensors must have the same type")
    m.require_vector(op, begin_t, "begin")  # TFLM's slice.cc
    m.require_vector(op, size_t, "size")
    begin = m.constant_ints(op, begin_t, "begin", len(shape))
    size = m.constant_ints(op, size_t, "size", len(shape))
    resolved = []
    for d, b, s in zip(shape, begin, size):
        # TFLM's GetValidatedBeginAndSizeVectors: 0 <= begin <= dim, size -1 = to the end.
        if not 0 <= b <= d:
            raise c.malformed(op, f"begin {list(begin)} is outside the input shape {list(shape)}")
        n = d - b if s == -1 else s
        if not 0 <= n <= d - b:
            raise c.malformed(op, f"size {list(size)} from begin {list(begin)} exceeds the input shape {list(shape)}")
        resolved.append(n)
    c.check_shape(op, out, resolved, "output")
    strides = m.row_major_strides(shape)
    offset = sum(b * s for b, s in zip(begin, strides))
    return inp, out, CopyData(op.index, op.type, shape, m.dims(out), strides, offset, np.dtype(inp.dtype).itemsize)


# -------------------------------------------------------------- STRIDED_SLICE
def _clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


def _start(begin: int, stride: int, size: int, masked: bool) -> int:
    # TFLM's StartForAxis.
    if masked:
        begin = _INT32_MIN if stride > 0 else _INT32_MAX
    if begin < 0:
        begin += size
    return _clamp(begin, 0, size) if stride > 0 else _clamp(begin, -1, size - 1)


def _stop(end: int, stride: int, size: int, masked: bool) -> int:
    # TFLM's StopForAxis (shrunk axes are handled by the caller).
    if masked:
        end = _INT32_MAX if stride > 0 else _INT32_MIN
    if end < 0:
        end += size
    return _clamp(end, 0, size) if stride > 0 else _clamp(end, -1, size - 1)


def _strided_slice(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, CopyData]:
    (inp, begin_t, end_t, strides_t), _, out = c.operands(graph, op, 4)
    shape = m.dims(inp)
    rank = len(shape)
    begin = m.constant_ints(op, begin_t, "begin", rank)
    end = m.constant_ints(op, end_t, "end", rank)
    steps = m.constant_ints(op, strides_t, "strides", rank)
    opt = op.options
    begin_mask, end_mask = int(opt.get("begin_mask", 0)), int(opt.get("end_mask", 0))
    shrink = int(opt.get("shrink_axis_mask", 0))
    # TFLM's BuildStridedSliceParams zeroes ellipsis_mask and new_axis_mask and
    # never sets offset: they are ignored, as there (the output shape check below
    # still holds the model to what the kernel computes).
    in_strides = m.row_major_strides(shape)
    out_shape, strides, offset = [], [], 0
    for d in range(rank):
        step = steps[d]
        if step == 0:
            raise c.malformed(op, "a stride is 0 (TFLM: stride value has to be non-zero)")
        start = _start(begin[d], step, shape[d], bool(begin_mask >> d & 1))
        shrunk = bool(shrink >> d & 1)
        stop = start + 1 if shrunk else _stop(end[d], step, shape[d], bool(end_mask >> d & 1))
        n = max(0, -(-(stop - start) // step))
        if n and not (0 <= start < shape[d] and 0 <= start + (n - 1) * step < shape[d]):
            # TFLM would read outside the input (e.g. a shrunk axis past its end).
            raise c.malformed(op, f"axis {d} reads indices {start}..{start + (n - 1) * step} of a dimension "
                                  f"of {shape[d]}")
        offset += start * in_strides[d] if n else 0
        if not shrunk:
            out_shape.append(n)
            strides.append(step * in_strides[d])
    c.check_shape(op, out, out_shape, "output")
    return inp, out, CopyData(op.index, op.type, shape, m.dims(out), tuple(strides), offset,
                              np.dtype(inp.dtype).itemsize)


# --------------------------------------------------------------- BROADCAST_TO
def _broadcast_to(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, CopyData]:
    (inp, shape_t), _, out = c.operands(graph, op, 2)
    shape = m.dims(inp)
    if len(shape_t.shape) != 1:
        raise c.malformed(op, f"shape tensor {shape_t.index} must be 1-D")
    target = m.constant_ints(op, shape_t, "shape")
    if len(shape) > len(target):
        raise c.malformed(op, f"cannot broadcast {list(shape)} to the lower rank {list(target)}")
    lead = len(target) - len(shape)
    if any(d != 1 and d != target[lead + k] for k, d in enumerate(shape)):
        raise c.malformed(op, f"cannot broadcast {list(shape)} to {list(target)}")
    c.check_shape(op, out, target, "output")
    strides = c.broadcast_strides(shape, target)
    return inp, out, CopyData(op.index, op.type, shape, tuple(target), strides, 0, np.dtype(inp.dtype).itemsize)


_PARTS = {"TRANSPOSE": _transpose, "SLICE": _slice, "STRIDED_SLICE": _strided_slice, "BROADCAST_TO": _broadcast_to}


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, constant index operands, the output shape TFLM's Prepare computes."""
    _PARTS[op.type](graph, op)


def analyze(graph: Graph, op: Operator) -> CopyData:
    """The strided copy; TFLM's rank limit; input and output quantized alike."""
    inp, out, data = _PARTS[op.type](graph, op)
    _rank_limit(op, max(len(inp.shape), len(out.shape)))
    m.same_quantization(op, inp, out)
    return data
