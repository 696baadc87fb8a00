"""What the shape and data-movement operators share: operands, dtypes, constant index vectors.

These operators move values without rescaling them (TFLM copies the raw
int8/int16 values), so input and output must share their quantization: the
rule of :func:`~tvmdevice.ops._checks.same_quantization`, here for int16 too.
Index operands (permutations, begins, sizes, axes) must be constant: their
values decide the output shape, which a statically planned model fixes.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, INT16

__all__ = ["MOVABLE", "MAX_DIMS", "dims", "outputs", "data_type", "same_quantization", "constant_ints", "axis",
           "row_major_strides"]

#: The element types the data-movement kernels take (TFLM's int8 and int16 kernels).
MOVABLE = INT8 | INT16
#: Rank of the host's generic copy loop (TFLM's shape operators take at most 5).
MAX_DIMS = 6


def dims(t: Tensor) -> tuple[int, ...]:
    """``t``'s shape as Python ints."""
    return tuple(int(d) for d in t.shape)


def outputs(graph: Graph, op: Operator) -> list[Tensor]:
    """Every output of a multi-output operator (SPLIT, UNPACK...), each present and non-empty."""
    if not op.outputs:
        raise c.malformed(op, "has no outputs")
    n = len(graph.tensors)
    for i in op.outputs:
        if not 0 <= i < n:
            raise c.malformed(op, f"output tensor index {i} is out of range [0, {n})")
    outs = graph.op_outputs(op)
    for t in outs:
        if any(d <= 0 for d in dims(t)):
            raise c.malformed(op, f"tensor {t.index} has an empty shape {list(t.shape)}")
        c._check_quantization(op, t)
    return outs


def data_type(op: Operator, t: Tensor, allowed: frozenset = MOVABLE) -> np.dtype:
    """``t``'s dtype, refused unless the operator's kernels take it."""
    dtype = np.dtype(t.dtype)
    if dtype not in allowed:
        names = "/".join(sorted(np.dtype(d).name for d in allowed))
        raise c.refuse(op, f"tensor {t.index} is {dtype.name}; {op.type} runs on {names}")
    return dtype


def same_quantization(op: Operator, a: Tensor, b: Tensor, allowed: frozenset = MOVABLE) -> None:
    """``a`` and ``b`` hold the same type and quantization: values are copied, never rescaled.

    int8 follows :func:`~tvmdevice.ops._checks.same_quantization` (TFLM's
    pooling rule); int16 the same scale tolerance and equal zero points.
    """
    da, db = data_type(op, a, allowed), data_type(op, b, allowed)
    if da != db:
        raise c.malformed(op, f"tensor {a.index} is {da.name} but tensor {b.index} is {db.name}")
    if da == np.int8:
        c.same_quantization(op, a, b)
        return
    qa, qb = a.quant, b.quant
    if qa is None or qb is None or qa.scale.size != 1 or qb.scale.size != 1:
        raise c.refuse(op, f"tensors {a.index} and {b.index} must be quantized per tensor")
    sa, sb = float(np.float32(qa.scale[0])), float(np.float32(qb.scale[0]))
    za, zb = int(qa.zero_point[0]), int(qb.zero_point[0])
    if not abs(sa - sb) <= c.POOL_SCALE_TOLERANCE or za != zb:
        raise c.refuse(op, f"tensors {a.index} and {b.index} must share scale and zero point (got {sa}/{za} and "
                           f"{sb}/{zb}); the kernel does not rescale")


def identical_quantization(op: Operator, a: Tensor, b: Tensor, rule: str) -> None:
    """``a`` is quantized exactly as ``b`` (equal float32 scale, equal zero point), as TFLM's
    ``rule`` (e.g. "concatenation.cc") compares them; checked where both are quantized per tensor."""
    qa, qb = a.quant, b.quant
    if qa is None or qb is None or not qa.scale.size or not qb.scale.size:
        return
    sa, sb = float(np.float32(qa.scale[0])), float(np.float32(qb.scale[0]))
    za, zb = int(qa.zero_point[0]), int(qb.zero_point[0])
    if sa != sb or za != zb:
        raise c.refuse(op, f"tensor {a.index} is quantized {sa!r}/{za}, tensor {b.index} {sb!r}/{zb}; TFLM's {rule} "
                           "requires them exactly equal")


def constant_ints(op: Operator, t: Tensor | None, role: str, length: int | None = None) -> tuple[int, ...]:
    """The values of a constant integer vector (or scalar) operand."""
    if t is None or t.data is None:
        raise c.refuse(op, f"the {role} operand must be a constant tensor (its values fix the output shape)")
    values = np.asarray(t.data).reshape(-1)
    if values.dtype.kind not in "iu":
        raise c.malformed(op, f"{role} tensor {t.index} is {values.dtype.name}; an integer type is required")
    if length is not None and values.size != length:
        raise c.malformed(op, f"{role} tensor {t.index} holds {values.size} values, expected {length}")
    return tuple(int(v) for v in values)


def require_vector(op: Operator, t: Tensor, role: str) -> None:
    """A 1-D index operand, as TFLM's prepare requires of a TRANSPOSE perm or SLICE's begin and size."""
    if len(t.shape) != 1:
        raise c.malformed(op, f"{role} tensor {t.index} has {len(t.shape)} dimensions; {op.type} takes a 1-D {role}")


def axis(op: Operator, value: int, rank: int, role: str = "axis") -> int:
    """``value`` made non-negative for a tensor of ``rank`` dimensions (a format error when out of range)."""
    resolved = value + rank if value < 0 else value
    if not 0 <= resolved < rank:
        raise c.malformed(op, f"{role} {value} is out of range for rank {rank}")
    return resolved


def row_major_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a dense row-major tensor of ``shape``."""
    strides, step = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = step
        step *= int(shape[d])
    return tuple(strides)
