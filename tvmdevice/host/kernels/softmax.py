"""SOFTMAX, int8 -> int8, along the last axis.

Bit-exact with TFLM's reference_ops::Softmax<int8_t, int8_t> (the gemmlowp
fixed-point path; TFLM's exp lookup tables are only used for int16):

* Prepare (CalculateSoftmaxParams): PreprocessSoftmaxScaling(beta,
  input_scale, kScaledDiffIntegerBits=5) gives ``input_multiplier`` and
  ``input_left_shift``; ``diff_min = -CalculateInputRadius(5, left_shift)``.
* Eval: per row, differences to the row maximum are rescaled to Q5.26,
  exponentiated, summed in Q12.19, and each exp is multiplied by the
  reciprocal of the sum and shifted down to 8 bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.errors import KernelError
from tvmdevice.host.kernels import _common as c
from tvmdevice.host.kernels import _fixedpoint as fp
from tvmdevice.kernel import PreparedCall
from tvmdevice.quantization import quantize_multiplier

__all__ = ["prepare", "SoftmaxParams", "softmax_int8"]

_SCALED_DIFF_INTEGER_BITS = 5
_ACCUMULATION_INTEGER_BITS = 12


@dataclass(frozen=True)
class SoftmaxParams:
    """Prepared SOFTMAX parameters."""

    input_multiplier: int
    input_left_shift: int
    diff_min: int
    where: str = "SOFTMAX"  # for run-time errors


def prepare(graph: Graph, op: Operator) -> PreparedCall:
    """Validate a SOFTMAX operator and compute TFLM's scaling parameters."""
    (inp,), _, out = c.operands(graph, op, 1)
    if len(inp.shape) < 1 or tuple(inp.shape) != tuple(out.shape):
        raise c.malformed(op, f"input shape {list(inp.shape)} and output shape {list(out.shape)} must match")
    in_scale, _ = c.per_tensor(op, inp, "input")
    out_scale, out_zp = c.per_tensor(op, out, "output")
    if out_zp != -128 or out_scale != 1.0 / 256:
        raise c.unsupported(op, f"int8 softmax needs output scale 1/256 and zero point -128 "
                                f"(got {out_scale}, {out_zp})")
    beta = float(np.float32(op.options.get("beta", 1.0)))
    # PreprocessSoftmaxScaling (double-rounding build: cap at 2**31 - 1).
    real = min(beta * in_scale * (1 << (31 - _SCALED_DIFF_INTEGER_BITS)), float((1 << 31) - 1))
    if not real > 1.0:
        raise c.unsupported(op, f"beta * input_scale = {beta * in_scale} is too small for TFLM's softmax")
    multiplier, left_shift = quantize_multiplier(real)
    # CalculateInputRadius(5, left_shift, total_signed_bits=31), in double.
    radius = math.floor(1.0 * ((1 << _SCALED_DIFF_INTEGER_BITS) - 1)
                        * (1 << (31 - _SCALED_DIFF_INTEGER_BITS)) / (1 << left_shift))
    params = SoftmaxParams(int(multiplier), int(left_shift), -radius, c.where(op))
    return PreparedCall(name="softmax_s8", kernel=run, params=params)


def softmax_int8(x: np.ndarray, p: SoftmaxParams) -> np.ndarray:
    """The int8 softmax of ``x`` along its last axis (int8 array out)."""
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    diff = rows - rows.max(axis=1, keepdims=True)
    live = diff >= p.diff_min
    # MultiplyByQuantizedMultiplierGreaterThanOne; masked entries are
    # computed too (their values are discarded) so the math stays vectorised.
    safe = np.where(live, diff, 0)
    scaled = fp.srdhm(safe * (1 << p.input_left_shift), p.input_multiplier)
    exp = fp.exp_on_negative_values(scaled, _SCALED_DIFF_INTEGER_BITS)
    terms = fp.rounding_divide_by_pot(exp, _ACCUMULATION_INTEGER_BITS)  # Rescale<12>
    sum_of_exps = c.wrap_i32(np.where(live, terms, 0).sum(axis=1))
    shifted_scale, bits_over_unit = fp.get_reciprocal(sum_of_exps, _ACCUMULATION_INTEGER_BITS)
    exponent = (bits_over_unit + 31 - 8)[:, None]
    if np.any(exponent > 31):
        # TFLM checks 0 <= exponent <= 31 and aborts: the sum of exps reached
        # 512, which only rows of more than 511 near-equal logits can do.
        raise KernelError(f"{p.where}: a row's sum of exponentials is too large for TFLM's int8 softmax "
                          "(more than 511 near-maximal logits); TFLM aborts on this input")
    unsat = fp.rounding_divide_by_pot(fp.srdhm(shifted_scale[:, None], exp), exponent)
    y = np.clip(unsat - 128, -128, 127)
    return np.where(live, y, -128).astype(np.int8).reshape(x.shape)


def run(params: SoftmaxParams, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, output]."""
    buffers[1][...] = softmax_int8(buffers[0], params)
