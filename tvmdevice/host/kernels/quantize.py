"""QUANTIZE (float32 -> int8, int8 -> int8) and DEQUANTIZE (int8 -> float32).

Bit-exact with TFLM's quantize_common.cc / dequantize:

* float32 -> int8 is reference_ops::AffineQuantize: ``val / float(scale)`` in
  float32, TfLiteRound (half away from zero), the zero point, and a clamp.
* int8 -> int8 is reference_ops::Requantize with the multiplier of
  ``input_scale / output_scale``.
* DEQUANTIZE is ``float(scale) * (q - zero_point)`` in float32.

The int8 paths are element-wise functions of 256 possible inputs, so they
are evaluated once at prepare time into a lookup table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.host.kernels import _common as c
from tvmdevice.kernel import PreparedCall
from tvmdevice.quantization import quantize_multiplier

__all__ = ["prepare", "AffineParams", "LutParams", "affine_quantize"]

_ALL_INT8 = np.arange(-128, 128, dtype=np.int64)


@dataclass(frozen=True)
class AffineParams:
    """float32 -> int8 quantization parameters."""

    scale: float  # the float32 scale
    zero_point: int


@dataclass(frozen=True)
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


def prepare(graph: Graph, op: Operator) -> PreparedCall:
    """Validate a QUANTIZE or DEQUANTIZE operator."""
    (inp,), _, out = c.operands(graph, op, 1)
    if tuple(inp.shape) != tuple(out.shape):
        raise c.malformed(op, f"input shape {list(inp.shape)} and output shape {list(out.shape)} must match")
    if op.type == "DEQUANTIZE":
        scale, zp = c.per_tensor(op, inp, "input")
        if out.dtype != np.float32:
            raise c.unsupported(op, f"output tensor {out.index} must be float32")
        values = np.float32(scale) * (_ALL_INT8 - zp).astype(np.float32)
        return PreparedCall(name="dequantize_s8", kernel=run_lut, params=LutParams(values.astype(np.float32)))
    out_scale, out_zp = c.per_tensor(op, out, "output")
    if inp.dtype == np.float32:
        return PreparedCall(name="quantize_f32_s8", kernel=run_affine, params=AffineParams(out_scale, out_zp))
    in_scale, in_zp = c.per_tensor(op, inp, "input")
    multiplier, shift = quantize_multiplier(in_scale / out_scale)
    y = c.requantize(_ALL_INT8 - in_zp, multiplier, shift) + out_zp
    return PreparedCall(name="requantize_s8", kernel=run_lut,
                        params=LutParams(np.clip(y, -128, 127).astype(np.int8)))


def run_affine(params: AffineParams, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [float32 input, int8 output]."""
    buffers[1][...] = affine_quantize(buffers[0], params.scale, params.zero_point)


def run_lut(params: LutParams, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [int8 input, output]; a table lookup."""
    buffers[1][...] = params.table[buffers[0].astype(np.int64) + 128]
