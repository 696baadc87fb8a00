"""SQUARED_DIFFERENCE, int8: TFLM's ``squared_difference.cc``.

Like int8 ADD with a left shift of 7: each input plus its offset is shifted
left by 7 and scaled by ``scale_i / (2 * max_scale)``; the int32 difference
is squared and scaled by ``(2 * max_scale)**2 / (2**14 * output_scale)``
(QuantizeMultiplier, any magnitude).  The output is clamped to int8 only.
Broadcasting goes through BroadcastBinaryFunction4DSlow: at most 4
dimensions when the shapes differ.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, Operand, Signature
from tvmdevice.ops._broadcast import BroadcastData, broadcast_operands, check_broadcast_rank
from tvmdevice.ops.elementwise import _smaller_than_one  # QuantizeMultiplierSmallerThanOneExp's range

__all__ = ["SquaredDifferenceData", "SIGNATURE", "LEFT_SHIFT", "MAX_BROADCAST_RANK", "validate", "analyze"]

SIGNATURE = Signature((Operand("input1", INT8), Operand("input2", INT8)), (Operand("output", INT8),))

#: TFLM's int8 left shift: 255**2 * 2**14 still fits int32.
LEFT_SHIFT = 7
MAX_BROADCAST_RANK = 4


@dataclass(frozen=True)
class SquaredDifferenceData(BroadcastData):
    """SQUARED_DIFFERENCE op data (TFLM's ArithmeticParams member names)."""

    input1_offset: int
    input2_offset: int
    output_offset: int
    left_shift: int
    input1_multiplier: int
    input1_shift: int
    input2_multiplier: int
    input2_shift: int
    output_multiplier: int
    output_shift: int


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, broadcast-compatible inputs, the output shape."""
    broadcast_operands(graph, op)


def analyze(graph: Graph, op: Operator) -> SquaredDifferenceData:
    """TFLM's Prepare for int8 SQUARED_DIFFERENCE."""
    in1, in2, out, shape = broadcast_operands(graph, op)
    check_broadcast_rank(op, in1, in2, shape, MAX_BROADCAST_RANK)
    s1, z1 = c.per_tensor_int8(op, in1, "input1")
    s2, z2 = c.per_tensor_int8(op, in2, "input2")
    so, zo = c.per_tensor_int8(op, out, "output")
    twice_max = 2.0 * max(s1, s2)
    m1, sh1 = _smaller_than_one(op, s1 / twice_max, "input1")
    m2, sh2 = _smaller_than_one(op, s2 / twice_max, "input2")
    mo, sho = c.multiplier(op, twice_max * twice_max / ((1 << (2 * LEFT_SHIFT)) * so))
    return SquaredDifferenceData(
        op_index=op.index, op_type=op.type, out_shape=shape, in1_shape=tuple(int(d) for d in in1.shape),
        in2_shape=tuple(int(d) for d in in2.shape), size=c.count(shape), input1_offset=-z1, input2_offset=-z2,
        output_offset=zo, left_shift=LEFT_SHIFT, input1_multiplier=m1, input1_shift=sh1, input2_multiplier=m2,
        input2_shift=sh2, output_multiplier=mo, output_shift=sho)
