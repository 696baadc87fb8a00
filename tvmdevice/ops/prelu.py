"""PRELU, int8: TFLM's CalculatePreluParams (``prelu_common.cc``).

A non-negative ``input - zero point`` is rescaled by ``input_scale /
output_scale``; a negative one is multiplied by ``alpha - alpha zero point``
and rescaled by ``input_scale * alpha_scale / output_scale`` (double, from
the float32 scales).  Alpha broadcasts against the input through TFLM's
4-D broadcast loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, Operand, Signature
from tvmdevice.ops._broadcast import BroadcastData, broadcast_operands

__all__ = ["PreluData", "SIGNATURE", "MAX_RANK", "validate", "analyze"]

SIGNATURE = Signature((Operand("input", INT8), Operand("alpha", INT8)), (Operand("output", INT8),))

#: BroadcastPrelu4DSlow.
MAX_RANK = 4


@dataclass(frozen=True)
class PreluData(BroadcastData):
    """PRELU op data (TFLM's PreluParams member names); input1 is the input, input2 alpha."""

    input_offset: int
    alpha_offset: int
    output_offset: int
    output_multiplier_1: int
    output_shift_1: int
    output_multiplier_2: int
    output_shift_2: int


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, an alpha that broadcasts to the input, the output shape."""
    inp, _, _, shape = broadcast_operands(graph, op)
    if shape != tuple(int(d) for d in inp.shape):
        raise c.malformed(op, f"alpha must broadcast to the input shape {list(inp.shape)}, the output is {list(shape)}")


def analyze(graph: Graph, op: Operator) -> PreluData:
    """TFLM's PreluPrepare for int8."""
    validate(graph, op)
    inp, alpha, out, shape = broadcast_operands(graph, op)
    if len(shape) > MAX_RANK:
        raise c.refuse(op, f"PRELU takes at most {MAX_RANK} dimensions, the input has {len(shape)}")
    s_in, z_in = c.per_tensor_int8(op, inp, "input")
    s_a, z_a = c.per_tensor_int8(op, alpha, "alpha")
    s_out, z_out = c.per_tensor_int8(op, out, "output")
    m1, sh1 = c.multiplier(op, s_in / s_out)
    m2, sh2 = c.multiplier(op, s_in * s_a / s_out)
    return PreluData(op_index=op.index, op_type=op.type, out_shape=shape, in1_shape=tuple(int(d) for d in inp.shape),
                     in2_shape=tuple(int(d) for d in alpha.shape), size=c.count(shape), input_offset=-z_in,
                     alpha_offset=-z_a, output_offset=z_out, output_multiplier_1=m1, output_shift_1=sh1,
                     output_multiplier_2=m2, output_shift_2=sh2)
