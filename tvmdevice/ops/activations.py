"""LOGISTIC and TANH, int8: TFLM's Prepare (``logistic_common.cc``, ``tanh_common.cc``).

The input, minus its zero point, is clamped by ``input_range_radius`` and
otherwise rescaled to Q4.27 with ``input_multiplier``/``input_left_shift``
(from ``frexp(input_scale * 2**27)``).  The output quantization is fixed:
1/256 and -128 for LOGISTIC, 1/128 and 0 for TANH (TFLM assumes it; it is
checked here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, OpData, Operand, Signature
from tvmdevice.quantization import round_half_away

__all__ = ["ActivationData", "SIGNATURE", "INPUT_INTEGER_BITS", "validate", "analyze"]

SIGNATURE = Signature((Operand("input", INT8),), (Operand("output", INT8),))

INPUT_INTEGER_BITS = 4
#: Output (scale, zero point) each operator's int8 kernel assumes.
_OUTPUT_QUANT = {"LOGISTIC": (1.0 / 256, -128), "TANH": (1.0 / 128, 0)}


@dataclass(frozen=True)
class ActivationData(OpData):
    """LOGISTIC / TANH op data (TFLM's OpDataLogistic / OpDataTanh member names)."""

    size: int
    input_zero_point: int
    input_range_radius: int
    input_multiplier: int
    input_left_shift: int


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor]:
    (inp,), _, out = c.operands(graph, op, 1)
    if tuple(inp.shape) != tuple(out.shape):
        raise c.malformed(op, f"input shape {list(inp.shape)} and output shape {list(out.shape)} must match")
    return inp, out


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts and equal input and output shapes."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> ActivationData:
    """LOGISTIC's or TANH's op data."""
    inp, out = _parts(graph, op)
    in_scale, in_zp = c.per_tensor_int8(op, inp, "input")
    got = c.per_tensor_int8(op, out, "output")
    want = _OUTPUT_QUANT[op.type]
    if got != want:
        raise c.refuse(op, f"int8 {op.type} needs output scale {want[0]} and zero point {want[1]} "
                           f"(got {got[0]}, {got[1]})")
    mantissa, left_shift = math.frexp(in_scale * float(1 << (31 - INPUT_INTEGER_BITS)))
    if left_shift < 0:
        raise c.refuse(op, f"input scale {in_scale} is too small")
    q = round_half_away(mantissa * (1 << 31))  # TfLiteRound
    # TFLM casts without QuantizeMultiplier's 2**31 -> 2**30 fix-up; the
    # conversion wraps to INT32_MIN on its targets.
    multiplier = c.INT32_MIN if q == 1 << 31 else q
    radius = math.floor(((1 << INPUT_INTEGER_BITS) - 1) * (1 << (31 - INPUT_INTEGER_BITS)) / (1 << left_shift))
    return ActivationData(op_index=op.index, op_type=op.type, size=c.count(out.shape), input_zero_point=in_zp,
                          input_range_radius=radius, input_multiplier=multiplier, input_left_shift=left_shift)
