"""LOG_SOFTMAX, int8: TFLM's ``log_softmax.cc`` CalculateOpData.

PreprocessLogSoftmaxScalingExp(beta=1, input_scale, 5): SOFTMAX's Q5.26
input multiplier and left shift, plus the reverse scaling divisor ``2**(31 -
left_shift) / multiplier`` as a multiplier below one and its right shift;
``diff_min`` is minus CalculateInputRadius(5, left_shift).  TFLM requires an
int8 output of scale exactly 16/256 and zero point 127.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, OpData, Operand, Signature
from tvmdevice.quantization import quantize_multiplier

__all__ = ["LogSoftmaxData", "SIGNATURE", "MAX_DEPTH", "validate", "analyze"]

SIGNATURE = Signature((Operand("input", INT8),), (Operand("output", INT8),))

_SCALED_DIFF_INTEGER_BITS = 5
#: The Q12.19 sum of exponentials is safe from overflow for fewer than 2**12 terms.
MAX_DEPTH = 4095
_OUTPUT_QUANT = (16.0 / 256, 127)


@dataclass(frozen=True)
class LogSoftmaxData(OpData):
    """LOG_SOFTMAX op data (TFLM's LogSoftmaxOpData member names): ``rows`` rows of ``depth``."""

    rows: int
    depth: int
    input_multiplier: int
    input_left_shift: int
    reverse_scaling_divisor: int
    reverse_scaling_right_shift: int  # positive: a right shift
    diff_min: int


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor]:
    (inp,), _, out = c.operands(graph, op, 1)
    if len(inp.shape) < 1 or tuple(inp.shape) != tuple(out.shape):
        raise c.malformed(op, f"input shape {list(inp.shape)} and output shape {list(out.shape)} must match")
    return inp, out


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, equal input and output shapes."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> LogSoftmaxData:
    """TFLM's LOG_SOFTMAX Prepare for int8."""
    inp, out = _parts(graph, op)
    in_scale, _ = c.per_tensor_int8(op, inp, "input")
    got = c.per_tensor_int8(op, out, "output")
    if got != _OUTPUT_QUANT:
        raise c.refuse(op, f"int8 LOG_SOFTMAX needs output scale 16/256 and zero point 127 (got {got[0]}, {got[1]})")
    depth = int(inp.shape[-1])
    if depth > MAX_DEPTH:
        raise c.refuse(op, f"LOG_SOFTMAX over {depth} values overflows TFLM's Q12.19 sum (at most {MAX_DEPTH})")
    # PreprocessSoftmaxScaling with beta 1, capped at 2**31 - 1.
    real = min(in_scale * (1 << (31 - _SCALED_DIFF_INTEGER_BITS)), float((1 << 31) - 1))
    if not real > 1.0:
        raise c.refuse(op, f"input scale {in_scale} is too small for TFLM's int8 LOG_SOFTMAX")
    multiplier, left_shift = quantize_multiplier(real)
    if not (0 < multiplier <= c.INT32_MAX and 0 <= left_shift <= 31):
        raise c.refuse(op, f"input multiplier {multiplier} / shift {left_shift} is out of range")
    reverse = float(1 << (31 - left_shift)) / multiplier
    if not 0.0 < reverse < 1.0:  # QuantizeMultiplierSmallerThanOneExp's check
        raise c.refuse(op, f"reverse scaling divisor {reverse} must be in (0, 1)")
    divisor, reverse_shift = quantize_multiplier(reverse)
    radius = math.floor(((1 << _SCALED_DIFF_INTEGER_BITS) - 1) * (1 << (31 - _SCALED_DIFF_INTEGER_BITS))
                        / (1 << left_shift))
    return LogSoftmaxData(op_index=op.index, op_type=op.type, rows=c.count(inp.shape) // depth, depth=depth,
                          input_multiplier=multiplier, input_left_shift=left_shift,
                          reverse_scaling_divisor=divisor, reverse_scaling_right_shift=-reverse_shift,
                          diff_min=-radius)
