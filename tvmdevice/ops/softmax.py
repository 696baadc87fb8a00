"""SOFTMAX int8 -> int8: TFLM's CalculateSoftmaxParams (``softmax_common.cc``).

PreprocessSoftmaxScaling(beta, input_scale, kScaledDiffIntegerBits=5) gives
the Q5.26 input multiplier and left shift; ``diff_min`` is minus
CalculateInputRadius(5, left_shift).  TFLM requires an int8 output of scale
exactly 1/256 and zero point -128.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, OpData, Operand, Signature
from tvmdevice.quantization import quantize_multiplier

__all__ = ["SoftmaxData", "SIGNATURE", "MAX_DEPTH", "validate", "analyze"]

SIGNATURE = Signature((Operand("input", INT8),), (Operand("output", INT8),), ("beta",))

_SCALED_DIFF_INTEGER_BITS = 5
#: Longest softmax row: the Q12.19 sum of 4096 exponentials of 1.0 overflows
#: TFLM's int32 accumulator.
MAX_DEPTH = 4095


@dataclass(frozen=True)
class SoftmaxData(OpData):
    """SOFTMAX op data: ``rows`` rows of ``depth`` values (the last axis)."""

    rows: int
    depth: int
    input_multiplier: int
    input_left_shift: int
    diff_min: int


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor]:
    (inp,), _, out = c.operands(graph, op, 1)
    if len(inp.shape) < 1 or tuple(inp.shape) != tuple(out.shape):
        raise c.malformed(op, f"input shape {list(inp.shape)} and output shape {list(out.shape)} must match")
    try:
        float(op.options.get("beta", 1.0))
    except (TypeError, ValueError):
        raise c.malformed(op, f"beta {op.options.get('beta')!r} is not a number") from None
    return inp, out


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, equal input and output shapes, a numeric beta."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> SoftmaxData:
    """TFLM's SoftmaxPrepare for int8 input and output."""
    inp, out = _parts(graph, op)
    in_scale, _ = c.per_tensor_int8(op, inp, "input")
    out_scale, out_zp = c.per_tensor_int8(op, out, "output")
    if out_zp != -128 or out_scale != 1.0 / 256:
        raise c.refuse(op, f"int8 softmax needs output scale 1/256 and zero point -128 (got {out_scale}, {out_zp})")
    return int8_input_data(op, inp, in_scale, SoftmaxData)


def int8_input_data(op: Operator, inp: Tensor, in_scale: float, cls: type) -> SoftmaxData:
    """The op data of a softmax on int8 input (TFLM's gemmlowp path, whatever the output type)."""
    depth = int(inp.shape[-1])
    if depth > MAX_DEPTH:
        raise c.refuse(op, f"softmax over {depth} values overflows TFLM's Q12.19 sum (at most {MAX_DEPTH})")
    beta = float(np.float32(op.options.get("beta", 1.0)))
    if not (math.isfinite(beta) and beta > 0):
        raise c.refuse(op, f"beta {beta} must be positive and finite")
    # PreprocessSoftmaxScaling, double-rounding build: capped at 2**31 - 1.
    real = min(beta * in_scale * (1 << (31 - _SCALED_DIFF_INTEGER_BITS)), float((1 << 31) - 1))
    if not real > 1.0:
        # QuantizeMultiplierGreaterThanOne aborts in TFLM.
        raise c.refuse(op, f"beta * input scale = {beta * in_scale} is too small for TFLM's int8 softmax")
    multiplier, left_shift = quantize_multiplier(real)
    if not (0 < multiplier <= c.INT32_MAX and 0 <= left_shift <= 31):
        raise c.refuse(op, f"input multiplier {multiplier} / shift {left_shift} is out of range")
    # CalculateInputRadius(5, left_shift, total_signed_bits=31), in double.
    radius = math.floor(((1 << _SCALED_DIFF_INTEGER_BITS) - 1) * (1 << (31 - _SCALED_DIFF_INTEGER_BITS))
                        / (1 << left_shift))
    return cls(op_index=op.index, op_type=op.type, rows=c.count(inp.shape) // depth, depth=depth,
               input_multiplier=int(multiplier), input_left_shift=int(left_shift), diff_min=-radius)
