"""MAXIMUM and MINIMUM, int8: TFLM's ``maximum_minimum.cc``.

TFLM has no Prepare for them: the raw int8 values are compared, whatever
the three tensors' quantization (a converter gives them one), and
MaximumMinimumBroadcastSlow walks every shape, broadcast or not, as at most
5 dimensions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, Operand, Signature
from tvmdevice.ops._broadcast import BroadcastData, broadcast_operands

__all__ = ["MinMaxData", "SIGNATURE", "MAX_RANK", "validate", "analyze"]

SIGNATURE = Signature((Operand("input1", INT8), Operand("input2", INT8)), (Operand("output", INT8),))

#: MaximumMinimumBroadcastSlow's NdArrayDesc<5>.
MAX_RANK = 5


@dataclass(frozen=True)
class MinMaxData(BroadcastData):
    """MAXIMUM / MINIMUM op data: only shapes."""

    maximum: bool


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, broadcast-compatible inputs, the output shape."""
    broadcast_operands(graph, op)


def analyze(graph: Graph, op: Operator) -> MinMaxData:
    """The shapes; int8 tensors of at most 5 dimensions."""
    in1, in2, out, shape = broadcast_operands(graph, op)
    for t, role in ((in1, "input1"), (in2, "input2"), (out, "output")):
        if np.dtype(t.dtype) != np.int8:
            raise c.refuse(op, f"{role} tensor {t.index} is {np.dtype(t.dtype).name}; int8 is required")
    if len(shape) > MAX_RANK:
        raise c.refuse(op, f"{op.type} takes at most {MAX_RANK} dimensions, the output has {len(shape)}")
    return MinMaxData(op_index=op.index, op_type=op.type, out_shape=shape, in1_shape=tuple(int(d) for d in in1.shape),
                      in2_shape=tuple(int(d) for d in in2.shape), size=c.count(shape),
                      maximum=op.type == "MAXIMUM")
