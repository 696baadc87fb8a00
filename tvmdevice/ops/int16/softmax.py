"""SOFTMAX with an int16 output: TFLM's CalculateSoftmaxParams and its int16 lookup tables (``softmax_common.cc``).

* int8 -> int16 is the int8 kernel's gemmlowp path with a 16-bit output:
  TFLM requires output zero point -32768 and scale 1/65536 (within 0.1%).
* int16 -> int16 is SoftmaxInt16: each difference to the row maximum is
  rescaled by ``input_scale * beta / (10 / 65535)`` so that [-65535, 0] covers
  [-10, 0], then exp comes from a 513-entry interpolated table, the sum's
  reciprocal from a 1/(1+x) table.  Zero points are 0 and the output scale is
  1/32768 (within 0.1%).  The tables are TFLM's LUTPopulate, computed here in
  float32 as TFLM computes them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np

from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import _checks as c
from tvmdevice.ops import softmax as base
from tvmdevice.ops._base import OpData
from tvmdevice.ops.int16 import _checks as c16
from tvmdevice.quantization import round_half_away

__all__ = ["Softmax8to16Data", "Softmax16Data", "MAX_INT16_DEPTH", "lut_populate", "exp_lut",
           "one_over_one_plus_x_lut", "analyze"]

#: Longest int16 softmax row: the Q16.15 sum of exps stays below 2**31.
MAX_INT16_DEPTH = 65536


@dataclass(frozen=True)
class Softmax8to16Data(base.SoftmaxData):
    """SOFTMAX int8 -> int16 op data (the int8 kernel's members)."""

    variant: ClassVar[str] = "int8->int16"


@dataclass(frozen=True, eq=False)
class Softmax16Data(OpData):
    """SOFTMAX int16 -> int16 op data: ``rows`` rows of ``depth`` values."""

    rows: int
    depth: int
    input_multiplier: int
    input_left_shift: int  # a QuantizeMultiplier shift: positive = left
    exp_lut: np.ndarray  # int16 [513]: exp(x) on [-10, 0]
    one_over_one_plus_x_lut: np.ndarray  # int16 [513]: 1 / (1 + x) on [0, 1]
    variant: ClassVar[str] = "int16"


def _round(x: np.float32) -> np.float32:
    return np.float32(round_half_away(float(x)))


def lut_populate(input_scale: np.float32, input_zp: int, output_scale: np.float32, output_zp: int,
                 fn: Callable[[np.float32], np.float32]) -> np.ndarray:
    """TFLM's ``LUTPopulate<int16_t>`` in float32: 512 samples, each nudged by half its
    midpoint interpolation error, and the value at the top of the range."""
    f = np.float32
    input_min = f(input_scale) * f(-32768 - input_zp)
    input_max = f(input_scale) * f(32767 - input_zp)
    output_min = f(output_scale) * f(-32768 - output_zp)
    output_max = f(output_scale) * f(32767 - output_zp)
    inv = f(65536) / (output_max - output_min)
    step = (input_max - input_min) / f(512)
    half_step = step / f(2)
    lut = np.zeros(513, dtype=np.int16)
    for i in range(512):
        x = input_min + f(i) * step
        val, mid, nxt = fn(x), fn(x + half_step), fn(input_min + f(i + 1) * step)
        sample = _round(val * inv)
        interp = _round((nxt * inv + _round(val * inv)) / f(2))
        bias = _round((interp - _round(mid * inv)) / f(2))
        lut[i] = int(min(max(sample - bias, f(-32768)), f(32767)))
    lut[512] = int(min(max(_round(fn(input_max) * inv), f(-32768)), f(32767)))
    return c.readonly(lut)


def _expf(x: np.float32) -> np.float32:
    return np.float32(math.exp(float(x)))  # exp correctly rounded to float32, as std::exp(float)


@functools.cache
def exp_lut() -> np.ndarray:
    """exp(x) for x in [-10, 0] (input 10/65535 per step, zero point 32767; output 2/65535)."""
    span = np.float32(65535)
    return lut_populate(np.float32(10) / span, 32767, np.float32(2) / span, 0, _expf)


@functools.cache
def one_over_one_plus_x_lut() -> np.ndarray:
    """1 / (1 + x) for x in [0, 1] (input 1/65535 per step, zero point -32768; output 2/65535)."""
    span = np.float32(65535)
    return lut_populate(np.float32(1) / span, -32768, np.float32(2) / span, 0,
                        lambda x: np.float32(1) / (np.float32(1) + x))


def _near(scale: float, want: float) -> bool:
    # TF_LITE_ENSURE_NEAR(scale, want, 0.001 * want) in float32.
    return abs(float(np.float32(scale) - np.float32(want))) <= float(np.float32(0.001) * np.float32(want))


def analyze(graph: Graph, op: Operator) -> OpData:
    """TFLM's SoftmaxPrepare for an int16 output."""
    inp, out = base._parts(graph, op)
    pair = (c16.dtype_name(inp), c16.dtype_name(out))
    if pair == ("int8", "int16"):
        in_scale, _ = c.per_tensor_int8(op, inp, "input")
        out_scale, out_zp = c16.per_tensor(op, out, "output", "int16")
        if out_zp != -32768 or not _near(out_scale, 1.0 / 65536):
            raise c.refuse(op, f"int8 -> int16 softmax needs output scale 1/65536 and zero point -32768 (got "
                               f"{out_scale}, {out_zp})")
        return base.int8_input_data(op, inp, in_scale, Softmax8to16Data)
    if pair != ("int16", "int16"):
        raise c.refuse(op, f"SOFTMAX {pair[0]} -> {pair[1]} is not supported (int8 -> int8, int8 -> int16, "
                           f"int16 -> int16)")
    in_scale = c16.symmetric(op, inp, "input")
    out_scale = c16.symmetric(op, out, "output")
    if not _near(out_scale, 1.0 / 32768):
        raise c.refuse(op, f"int16 softmax needs output scale 1/32768 (got {out_scale})")
    depth = int(inp.shape[-1])
    if depth > MAX_INT16_DEPTH:
        raise c.refuse(op, f"softmax over {depth} values overflows TFLM's Q16.15 sum (at most {MAX_INT16_DEPTH})")
    beta = float(np.float32(op.options.get("beta", 1.0)))
    if not (math.isfinite(beta) and beta > 0):
        raise c.refuse(op, f"beta {beta} must be positive and finite")
    multiplier, shift = c.multiplier(op, in_scale * beta / (10.0 / 65535.0))
    return Softmax16Data(op_index=op.index, op_type=op.type, rows=c.count(inp.shape) // depth, depth=depth,
                         input_multiplier=multiplier, input_left_shift=shift, exp_lut=exp_lut(),
                         one_over_one_plus_x_lut=one_over_one_plus_x_lut())
