"""MEAN, int8: TFLM's reduce Prepare for QuantizedMeanOrSum.

The int32 sum, minus ``input zero point * count``, is requantized by
``input_scale / output_scale`` with ``1 / count`` folded into the multiplier
(keeping the shift >= -31 at the price of precision, exactly as TFLM).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, INT32, OpData, Operand, Signature

__all__ = ["MeanData", "SIGNATURE", "MAX_RANK", "MAX_AXES", "validate", "analyze"]

SIGNATURE = Signature((Operand("input", INT8), Operand("axis", INT32, constant=True)), (Operand("output", INT8),),
                      ("keep_dims",))

MAX_RANK = 5
#: TFLM's resolved-axis scratch holds two entries.
MAX_AXES = 2


@dataclass(frozen=True)
class MeanData(OpData):
    """MEAN op data; ``multiplier``/``shift`` already include ``1 / count``."""

    in_shape: tuple[int, ...]
    axes: tuple[int, ...]  # sorted, non-negative, unique
    count: int  # elements averaged into each output
    input_offset: int
    output_offset: int
    multiplier: int
    shift: int


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, tuple[int, ...]]:
    (inp, axis_t), _, out = c.operands(graph, op, 2)
    rank = len(inp.shape)
    if axis_t.data is None or np.dtype(axis_t.dtype) != np.int32:
        raise c.malformed(op, f"axis tensor {axis_t.index} must be a constant int32 tensor")
    axes: list[int] = []
    for a in (int(v) for v in np.asarray(axis_t.data).reshape(-1)):
        if not -rank <= a < rank:
            raise c.malformed(op, f"axis {a} is out of range for rank {rank}")
        a = a + rank if a < 0 else a
        if a not in axes:
            axes.append(a)
    keep = bool(op.options.get("keep_dims", False))
    expected = [1 if k in axes else d for k, d in enumerate(inp.shape) if keep or k not in axes]
    c.check_shape(op, out, expected, "output")
    return inp, out, tuple(sorted(axes))


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, a constant int32 axis tensor in range, the reduced output shape."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> MeanData:
    """MEAN's op data: 1 to 5 dimensions, at most two reduced axes."""
    inp, out, axes = _parts(graph, op)
    rank = len(inp.shape)
    if rank > MAX_RANK or rank == 0:
        raise c.refuse(op, f"MEAN supports 1 to {MAX_RANK} dimensions, the input has {rank}")
    if len(axes) > MAX_AXES:
        raise c.refuse(op, f"MEAN over {len(axes)} axes; TFLM supports at most {MAX_AXES}")
    count = c.count([inp.shape[a] for a in axes])
    s_in, z_in = c.per_tensor_int8(op, inp, "input")
    s_out, z_out = c.per_tensor_int8(op, out, "output")
    multiplier, shift = c.multiplier(op, s_in / s_out)
    bits = min(count.bit_length() - 1, 32, 31 + shift)
    return MeanData(op_index=op.index, op_type=op.type, in_shape=tuple(int(d) for d in inp.shape), axes=axes,
                    count=count, input_offset=-z_in, output_offset=z_out,
                    multiplier=(multiplier << bits) // count, shift=shift - bits)
