"""SUM and REDUCE_MAX, int8: TFLM's ``reduce_common.cc``.

* SUM is QuantizedMeanOrSum with ``compute_sum``: the int32 sum minus
  ``input zero point * count`` requantized by ``input_scale / output_scale``
  (no ``1 / count``), the op data of MEAN (:class:`~tvmdevice.ops.MeanData`)
  with the plain multiplier.  TFLM resolves at most two axes for it.
* REDUCE_MAX compares raw int8 values; TFLM requires the input and output
  to share scale (exactly) and zero point.

Both take at most 5 dimensions (TFLM's kMaxNumberOfAxis).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops import mean
from tvmdevice.ops._base import INT8, INT32, OpData, Operand, Signature
from tvmdevice.ops.mean import MeanData

__all__ = ["ReduceMaxData", "SIGNATURE", "MAX_RANK", "validate", "analyze"]

SIGNATURE = Signature((Operand("input", INT8), Operand("axis", INT32, constant=True)), (Operand("output", INT8),),
                      ("keep_dims",))

MAX_RANK = 5


@dataclass(frozen=True)
class ReduceMaxData(OpData):
    """REDUCE_MAX op data."""

    in_shape: tuple[int, ...]
    axes: tuple[int, ...]  # sorted, non-negative, unique


def validate(graph: Graph, op: Operator) -> None:
    """As MEAN: a constant int32 axis tensor in range, the reduced output shape."""
    mean.validate(graph, op)


def _rank(op: Operator, inp: Tensor) -> None:
    rank = len(inp.shape)
    if not 1 <= rank <= MAX_RANK:
        raise c.refuse(op, f"{op.type} supports 1 to {MAX_RANK} dimensions, the input has {rank}")


def analyze(graph: Graph, op: Operator) -> OpData:
    """SUM's op data (a :class:`MeanData` without the ``1 / count``) or REDUCE_MAX's."""
    inp, out, axes = mean._parts(graph, op)
    _rank(op, inp)
    s_in, z_in = c.per_tensor_int8(op, inp, "input")
    s_out, z_out = c.per_tensor_int8(op, out, "output")
    in_shape = tuple(int(d) for d in inp.shape)
    if op.type == "REDUCE_MAX":
        if np.float32(s_in) != np.float32(s_out) or z_in != z_out:
            raise c.refuse(op, f"int8 REDUCE_MAX needs the input's scale and zero point on the output (got "
                               f"{s_in}/{z_in} and {s_out}/{z_out})")
        return ReduceMaxData(op_index=op.index, op_type=op.type, in_shape=in_shape, axes=axes)
    if len(axes) > mean.MAX_AXES:
        raise c.refuse(op, f"SUM over {len(axes)} axes; TFLM supports at most {mean.MAX_AXES}")
    multiplier, shift = c.multiplier(op, s_in / s_out)
    return MeanData(op_index=op.index, op_type=op.type, in_shape=in_shape, axes=axes,
                    count=c.count([inp.shape[a] for a in axes]), input_offset=-z_in, output_offset=z_out,
                    multiplier=multiplier, shift=shift)
