"""SOFTMAX, int8 -> int8, along the last axis.

Bit-exact with TFLM's reference_ops::Softmax<int8_t, int8_t> (the gemmlowp
fixed-point path; TFLM's exp lookup tables are only used for int16):

* Prepare (CalculateSoftmaxParams) is :func:`tvmdevice.ops.analyze`'s
  :class:`~tvmdevice.ops.SoftmaxData`.
* Eval: per row, differences to the row maximum are rescaled to Q5.26,
  exponentiated, summed in Q12.19, and each exp is multiplied by the
  reciprocal of the sum and shifted down to 8 bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvmdevice.errors import KernelError
from tvmdevice.kernel import PreparedCall
from tvmdevice.ops import SoftmaxData
from tvmdevice.testing.reference import _common as c
from tvmdevice.testing.reference import _fixedpoint as fp

__all__ = ["build", "run", "softmax_int8"]

_SCALED_DIFF_INTEGER_BITS = 5
_ACCUMULATION_INTEGER_BITS = 12


def build(data: SoftmaxData) -> PreparedCall:
    """The host call for SOFTMAX op data."""
    return PreparedCall(name="softmax_s8", kernel=run, params=data)


def softmax_int8(x: np.ndarray, p: SoftmaxData, output_bits: int = 8) -> np.ndarray:
    """The softmax of int8 ``x`` along its last axis: an int8 array, or int16 with ``output_bits`` 16."""
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
    exponent = (bits_over_unit + 31 - output_bits)[:, None]
    if np.any(exponent > 31):
        # TFLM checks 0 <= exponent <= 31 and aborts: the sum of exps reached
        # 512, which only rows of more than 511 near-equal logits can do.
        raise KernelError(f"operator {p.op_index} ({p.op_type}): a row's sum of exponentials is too large for "
                          "TFLM's int8 softmax (more than 511 near-maximal logits); TFLM aborts on this input")
    unsat = fp.rounding_divide_by_pot(fp.srdhm(shifted_scale[:, None], exp), exponent)
    lowest, highest = -(1 << (output_bits - 1)), (1 << (output_bits - 1)) - 1
    y = np.clip(unsat + lowest, lowest, highest)
    return np.where(live, y, lowest).astype(np.int8 if output_bits == 8 else np.int16).reshape(x.shape)


def run(params: SoftmaxData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, output]."""
    buffers[1][...] = softmax_int8(buffers[0], params)
