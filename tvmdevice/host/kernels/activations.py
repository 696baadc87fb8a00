"""LOGISTIC and TANH, int8.

Bit-exact with TFLM's reference_integer_ops::Logistic / Tanh for int8: the
input, minus its zero point, is clamped by ``input_range_radius`` and
otherwise rescaled to Q4.27 with ``input_multiplier``/``input_left_shift``
(from ``frexp(input_scale * 2**27)``), run through gemmlowp's fixed-point
logistic / tanh and shifted down to 8 bits.  Output quantization is fixed:
1/256 and -128 for LOGISTIC, 1/128 and 0 for TANH (TFLM assumes it; it is
checked here).

Both are functions of one int8 value, evaluated for all 256 inputs at
prepare time; the kernel is a table lookup.
"""

from __future__ import annotations

import math

import numpy as np

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.host.kernels import _common as c
from tvmdevice.host.kernels import _fixedpoint as fp
from tvmdevice.host.kernels.quantize import LutParams, run_lut
from tvmdevice.kernel import PreparedCall
from tvmdevice.quantization import round_half_away

__all__ = ["prepare", "logistic_int8", "tanh_int8"]

_INPUT_INTEGER_BITS = 4
_ALL_INT8 = np.arange(-128, 128, dtype=np.int64)


def _input_rescale(op: Operator, scale: float) -> tuple[int, int, int]:
    """(multiplier, left_shift, range_radius) as TFLM's Logistic/Tanh Prepare."""
    real = scale * float(1 << (31 - _INPUT_INTEGER_BITS))
    mantissa, left_shift = math.frexp(real)
    if left_shift < 0:
        raise c.unsupported(op, f"input scale {scale} is too small")
    q = round_half_away(mantissa * (1 << 31))  # TfLiteRound
    # TFLM casts without the usual 2**31 -> 2**30 fix-up; the conversion
    # wraps to INT32_MIN on its targets.
    multiplier = c.INT32_MIN if q == 1 << 31 else q
    radius = math.floor(1.0 * ((1 << _INPUT_INTEGER_BITS) - 1) * (1 << (31 - _INPUT_INTEGER_BITS))
                        / (1 << left_shift))
    return multiplier, left_shift, radius


def _evaluate(values: np.ndarray, zero_point: int, multiplier: int, left_shift: int, radius: int,
              logistic: bool) -> np.ndarray:
    x = values - zero_point
    x_q4 = c.requantize(x, multiplier, left_shift)
    if logistic:
        y = fp.rounding_divide_by_pot(fp.logistic(x_q4, _INPUT_INTEGER_BITS), 31 - 8) - 128
    else:
        y = fp.rounding_divide_by_pot(fp.tanh(x_q4, _INPUT_INTEGER_BITS), 31 - 7)
    y = np.clip(y, -128, 127)
    y = np.where(x <= -radius, -128, np.where(x >= radius, 127, y))
    return y.astype(np.int8)


def logistic_int8(values: np.ndarray, zero_point: int, multiplier: int, left_shift: int, radius: int) -> np.ndarray:
    """TFLM's int8 logistic of ``values`` (any integer array of int8 values)."""
    return _evaluate(np.asarray(values, np.int64), zero_point, multiplier, left_shift, radius, True)


def tanh_int8(values: np.ndarray, zero_point: int, multiplier: int, left_shift: int, radius: int) -> np.ndarray:
    """TFLM's int8 tanh of ``values`` (any integer array of int8 values)."""
    return _evaluate(np.asarray(values, np.int64), zero_point, multiplier, left_shift, radius, False)


def prepare(graph: Graph, op: Operator) -> PreparedCall:
    """Validate a LOGISTIC or TANH operator and tabulate it."""
    (inp,), _, out = c.operands(graph, op, 1)
    if tuple(inp.shape) != tuple(out.shape):
        raise c.malformed(op, f"input shape {list(inp.shape)} and output shape {list(out.shape)} must match")
    in_scale, in_zp = c.per_tensor(op, inp, "input")
    out_scale, out_zp = c.per_tensor(op, out, "output")
    logistic = op.type == "LOGISTIC"
    want = (1.0 / 256, -128) if logistic else (1.0 / 128, 0)
    if (out_scale, out_zp) != want:
        raise c.unsupported(op, f"int8 {op.type} needs output scale {want[0]} and zero point {want[1]} "
                                f"(got {out_scale}, {out_zp})")
    multiplier, left_shift, radius = _input_rescale(op, in_scale)
    fn = logistic_int8 if logistic else tanh_int8
    table = fn(_ALL_INT8, in_zp, multiplier, left_shift, radius)
    return PreparedCall(name="logistic_s8" if logistic else "tanh_s8", kernel=run_lut, params=LutParams(table))
