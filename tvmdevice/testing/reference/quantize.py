"""QUANTIZE (float32 -> int8, int8 -> int8) and DEQUANTIZE (int8 -> float32).

Bit-exact with TFLM's quantize_common.cc / dequantize, run on
:class:`tvmdevice.ops.QuantizeData` / :class:`~tvmdevice.ops.DequantizeData`:

* float32 -> int8 is reference_ops::AffineQuantize: ``val / float(scale)`` in
  float32, TfLiteRound (half away from zero), the zero point, and a clamp.
* int8 -> int8 is reference_ops::Requantize with the op data's multiplier.
* DEQUANTIZE is ``float(scale) * (q - zero_point)`` in float32.

The int8 paths are element-wise functions of 256 possible inputs, so the
host evaluates them once into a lookup table (its own packing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tvmdevice.kernel import PreparedCall
from tvmdevice.ops import DequantizeData, QuantizeData
from tvmdevice.testing.reference import _common as c

__all__ = ["build", "LutParams", "affine_quantize", "run_affine", "run_lut", "ALL_INT8"]

#: Every int8 value, in table order.
ALL_INT8 = np.arange(-128, 128, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class LutParams:
    """A 256-entry table indexed by ``int8 value + 128``."""

    table: np.ndarray


def affine_quantize(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """TFLM's AffineQuantize of float32 ``x`` to int8."""
    q = (np.asarray(x, dtype=np.float32) / np.float32(scale)).astype(np.float64)
    # std::round of the float32 quotient; in float64, |q| + 0.5 is exact.
    rounded = np.sign(q) * np.floor(np.abs(q) + 0.5)
    # static_cast<int32_t> of an out-of-range or NaN float is undefined in C;
    # such inputs saturate here, which is what the clamp below wants anyway.
    rounded = np.nan_to_num(rounded, nan=0.0)
    clipped = np.clip(rounded, c.INT32_MIN, c.INT32_MAX).astype(np.int64)
    return np.clip(clipped + zero_point, -128, 127).astype(np.int8)


def build(data: QuantizeData | DequantizeData) -> PreparedCall:
    """The host call for QUANTIZE / DEQUANTIZE op data."""
    if isinstance(data, DequantizeData):
        values = np.float32(data.scale) * (ALL_INT8 - data.zero_point).astype(np.float32)
        return PreparedCall(name="dequantize_s8", kernel=run_lut, params=LutParams(values.astype(np.float32)))
    if data.from_float:
        return PreparedCall(name="quantize_f32_s8", kernel=run_affine, params=data)
    y = c.requantize(ALL_INT8 + data.input_offset, data.multiplier, data.shift) + data.output_offset
    return PreparedCall(name="requantize_s8", kernel=run_lut,
                        params=LutParams(np.clip(y, -128, 127).astype(np.int8)))


def run_affine(params: QuantizeData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [float32 input, int8 output]."""
    buffers[1][...] = affine_quantize(buffers[0], params.output_scale, params.output_offset)


def run_lut(params: LutParams, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [int8 input, output]; a table lookup."""
    buffers[1][...] = params.table[buffers[0].astype(np.int64) + 128]
