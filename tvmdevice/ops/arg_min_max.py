"""ARG_MAX and ARG_MIN, int8 input: TFLM's ``arg_min_max.cc``.

The index of the first largest (smallest) raw int8 value along one axis, as
int32; TFLM takes only an int32 axis tensor and an int32 output.  The output
drops the axis dimension.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, INT32, SHAPE_TYPES, OpData, Operand, Signature

__all__ = ["ArgMinMaxData", "SIGNATURE", "validate", "analyze"]

SIGNATURE = Signature((Operand("input", INT8), Operand("axis", SHAPE_TYPES, constant=True)),
                      (Operand("output", INT32 | frozenset({np.dtype("<i8")})),), ("output_type",))


@dataclass(frozen=True)
class ArgMinMaxData(OpData):
    """ARG_MAX / ARG_MIN op data: the input as [outer, axis, inner]."""

    outer_size: int
    axis_size: int
    inner_size: int


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, Tensor, int]:
    (inp, axis_t), _, out = c.operands(graph, op, 2)
    rank = len(inp.shape)
    if axis_t.data is None or c.count(axis_t.shape) != 1:
        raise c.malformed(op, f"axis tensor {axis_t.index} must be a constant with one value")
    axis = int(np.asarray(axis_t.data).reshape(-1)[0])
    if not -rank <= axis < rank:
        raise c.malformed(op, f"axis {axis} is out of range for rank {rank}")
    axis = axis + rank if axis < 0 else axis
    c.check_shape(op, out, [d for k, d in enumerate(inp.shape) if k != axis], "output")
    return inp, axis_t, out, axis


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, a constant axis in range, the output shape without that axis."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> ArgMinMaxData:
    """ARG_MAX's or ARG_MIN's op data: int8 input, int32 axis and output."""
    inp, axis_t, out, axis = _parts(graph, op)
    if np.dtype(inp.dtype) != np.int8:
        raise c.refuse(op, f"input tensor {inp.index} is {np.dtype(inp.dtype).name}; int8 is required")
    for t, role in ((axis_t, "axis"), (out, "output")):
        if np.dtype(t.dtype) != np.int32:
            raise c.refuse(op, f"{role} tensor {t.index} is {np.dtype(t.dtype).name}; TFLM supports int32 only")
    shape = [int(d) for d in inp.shape]
    return ArgMinMaxData(op_index=op.index, op_type=op.type, outer_size=c.count(shape[:axis]),
                         axis_size=shape[axis], inner_size=c.count(shape[axis + 1:]))
