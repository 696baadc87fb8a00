"""LOGISTIC and TANH, int8.

Bit-exact with TFLM's reference_integer_ops::Logistic / Tanh for int8, run on
:class:`tvmdevice.ops.ActivationData`: the input, minus its zero point, is
clamped by ``input_range_radius`` and otherwise rescaled to Q4.27, run
through gemmlowp's fixed-point logistic / tanh and shifted down to 8 bits.

Both are functions of one int8 value, evaluated for all 256 inputs when the
call is built; the kernel is a table lookup.
"""

from __future__ import annotations

import numpy as np

from tvmdevice.kernel import PreparedCall
from tvmdevice.ops import ActivationData
from tvmdevice.ops.activations import INPUT_INTEGER_BITS
from tvmdevice.testing.reference import _common as c
from tvmdevice.testing.reference import _fixedpoint as fp
from tvmdevice.testing.reference.quantize import ALL_INT8, LutParams, run_lut

__all__ = ["build", "logistic_int8", "tanh_int8"]


def _evaluate(values: np.ndarray, zero_point: int, multiplier: int, left_shift: int, radius: int,
              logistic: bool) -> np.ndarray:
    x = values - zero_point
    x_q4 = c.requantize(x, multiplier, left_shift)
    if logistic:
        y = fp.rounding_divide_by_pot(fp.logistic(x_q4, INPUT_INTEGER_BITS), 31 - 8) - 128
    else:
        y = fp.rounding_divide_by_pot(fp.tanh(x_q4, INPUT_INTEGER_BITS), 31 - 7)
    y = np.clip(y, -128, 127)
    y = np.where(x <= -radius, -128, np.where(x >= radius, 127, y))
    return y.astype(np.int8)


def logistic_int8(values: np.ndarray, zero_point: int, multiplier: int, left_shift: int, radius: int) -> np.ndarray:
    """TFLM's int8 logistic of ``values`` (any integer array of int8 values)."""
    return _evaluate(np.asarray(values, np.int64), zero_point, multiplier, left_shift, radius, True)


def tanh_int8(values: np.ndarray, zero_point: int, multiplier: int, left_shift: int, radius: int) -> np.ndarray:
    """TFLM's int8 tanh of ``values`` (any integer array of int8 values)."""
    return _evaluate(np.asarray(values, np.int64), zero_point, multiplier, left_shift, radius, False)


def build(data: ActivationData) -> PreparedCall:
    """The host call for LOGISTIC / TANH op data: a 256-entry table."""
    logistic = data.op_type == "LOGISTIC"
    fn = logistic_int8 if logistic else tanh_int8
    table = fn(ALL_INT8, data.input_zero_point, data.input_multiplier, data.input_left_shift,
               data.input_range_radius)
    return PreparedCall(name="logistic_s8" if logistic else "tanh_s8", kernel=run_lut, params=LutParams(table))
