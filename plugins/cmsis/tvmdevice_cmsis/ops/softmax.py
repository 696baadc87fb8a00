"""SOFTMAX int8 -> int8: validation and parameters (TFLM's CalculateSoftmaxParams).

PreprocessSoftmaxScaling(beta, input_scale, 5) gives the Q5.26 input
multiplier and left shift; ``diff_min`` is minus CalculateInputRadius(5,
left_shift).  The output must be quantized with scale 1/256 and zero point
-128, as TFLM requires for int8.
"""

from __future__ import annotations

import math

import numpy as np

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.quantization import quantize_multiplier

from . import _common as c

__all__ = ["analyze_softmax", "MAX_DEPTH"]

_SCALED_DIFF_INTEGER_BITS = 5
#: Longest softmax row: the Q12.19 sum of 4096 exponentials of 1.0 would
#: overflow TFLM's int32 accumulator.
MAX_DEPTH = 4095


def analyze_softmax(graph: Graph, op: Operator) -> c.KernelSpec:
    """Validate a SOFTMAX operator and compute its kernel spec."""
    ins, out = c.io(graph, op, 1, 1)
    inp = ins[0]
    if len(inp.shape) < 1 or tuple(inp.shape) != tuple(out.shape):
        raise c.invalid(op, f"input shape {list(inp.shape)} and output shape {list(out.shape)} must match")
    in_scale, _ = c.int8_quant(op, inp, "input")
    out_scale, out_zp = c.int8_quant(op, out, "output")
    # TFLM: TF_LITE_ENSURE_NEAR(output scale, 1/256, 0.001/256) and zero point -128.
    if out_zp != -128 or abs(out_scale - 1.0 / 256) > 0.001 / 256:
        raise c.unsupported(op, f"int8 softmax needs output scale 1/256 and zero point -128 "
                                f"(got {out_scale}, {out_zp})")
    depth = int(inp.shape[-1])
    if depth > MAX_DEPTH:
        raise c.unsupported(op, f"softmax over {depth} values overflows TFLM's Q12.19 sum (max {MAX_DEPTH})")
    try:
        beta = float(np.float32(op.options.get("beta", 1.0)))
    except (TypeError, ValueError):
        raise c.invalid(op, f"beta {op.options.get('beta')!r} is not a number") from None
    if not (math.isfinite(beta) and beta > 0):
        raise c.unsupported(op, f"beta {beta} must be positive and finite")
    # PreprocessSoftmaxScaling, double-rounding build: capped at 2**31 - 1.
    real = min(beta * in_scale * (1 << (31 - _SCALED_DIFF_INTEGER_BITS)), float((1 << 31) - 1))
    if not real > 1.0:
        # QuantizeMultiplierGreaterThanOne aborts in TFLM.
        raise c.unsupported(op, f"beta * input scale = {beta * in_scale} is too small for TFLM's int8 softmax")
    multiplier, left_shift = quantize_multiplier(real)
    if not (0 < multiplier < 2**31 and 0 <= left_shift <= 31):
        raise c.unsupported(op, f"input multiplier {multiplier} / shift {left_shift} out of range")
    # CalculateInputRadius(5, left_shift, 31), in double.
    radius = math.floor(((1 << _SCALED_DIFF_INTEGER_BITS) - 1) * (1 << (31 - _SCALED_DIFF_INTEGER_BITS))
                        / (1 << left_shift))
    fields = {"rows": c.count(tuple(inp.shape)) // depth, "depth": depth, "input_multiplier": multiplier,
              "input_left_shift": left_shift, "diff_min": -radius}
    return c.KernelSpec(kind="softmax", name="tvmd_cmsis_softmax_s8", fields=fields,
                        buffers=(c.buffer("input", inp), c.buffer("output", out, output=True)))
