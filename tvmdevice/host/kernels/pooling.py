"""AVERAGE_POOL_2D and MAX_POOL_2D, int8.

Bit-exact with TFLM's reference_integer_ops::AveragePool / MaxPool: windows
are clipped to the image, the average divides by the number of taps inside
the image and rounds half away from zero with C integer division, and no
rescaling happens (input and output must share quantization, as TFLM checks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.host.kernels import _common as c
from tvmdevice.host.kernels.conv import windows
from tvmdevice.kernel import PreparedCall
from tvmdevice.windows import leading_padding, out_size

__all__ = ["prepare", "PoolParams"]


@dataclass(frozen=True)
class PoolParams:
    """Prepared pooling parameters; ``counts`` is the per-window tap count (average only)."""

    average: bool
    kernel: tuple[int, int]
    stride: tuple[int, int]
    pad: tuple[int, int]
    out_hw: tuple[int, int]
    counts: np.ndarray | None  # int64, shape (OH, OW, 1)
    act_min: int
    act_max: int


def prepare(graph: Graph, op: Operator) -> PreparedCall:
    """Validate an AVERAGE_POOL_2D or MAX_POOL_2D operator and compute its parameters."""
    (inp,), _, out = c.operands(graph, op, 1)
    o = op.options
    if len(inp.shape) != 4:
        raise c.malformed(op, f"input tensor {inp.index} must be 4-D, has shape {list(inp.shape)}")
    stride = (int(o["stride_h"]), int(o["stride_w"]))
    kernel = (int(o["filter_height"]), int(o["filter_width"]))
    if min(stride) < 1 or min(kernel) < 1:
        raise c.malformed(op, f"strides {stride} and filter size {kernel} must be >= 1")
    n, h, w, ch = inp.shape
    oh = out_size(o["padding"], h, kernel[0], stride[0])
    ow = out_size(o["padding"], w, kernel[1], stride[1])
    c.check_shape(op, out, (n, oh, ow, ch), "output")
    if min(n, oh, ow, ch) <= 0:
        raise c.malformed(op, f"output shape {list(out.shape)} is empty")
    c.check_window_extent(op, inp.shape, kernel)
    pad = (leading_padding(stride[0], 1, h, kernel[0], oh), leading_padding(stride[1], 1, w, kernel[1], ow))
    c.require_same_quant(op, inp, out)
    out_scale, out_zp = c.per_tensor(op, out, "output")
    act_min, act_max = c.activation_range(op, o["fused_activation"], out_scale, out_zp)
    average = op.type == "AVERAGE_POOL_2D"
    counts = None
    if average:
        # Taps inside the image, per output row and column (TFLM clips each
        # window to the image); the count of a window is their product.
        rows = _taps(oh, stride[0], pad[0], kernel[0], h)
        cols = _taps(ow, stride[1], pad[1], kernel[1], w)
        counts = (rows[:, None] * cols[None, :])[..., None]
        if np.any(counts == 0):
            # TFLM's AveragePool returns an error for a window outside the image.
            raise c.malformed(op, "a pooling window lies entirely in the padding")
    params = PoolParams(average, kernel, stride, pad, (oh, ow), counts, act_min, act_max)
    return PreparedCall(name="avg_pool2d_s8" if average else "max_pool2d_s8", kernel=run, params=params)


def _taps(n_out: int, stride: int, pad: int, filt: int, size: int) -> np.ndarray:
    origin = np.arange(n_out, dtype=np.int64) * stride - pad
    return np.maximum(np.minimum(filt, size - origin) - np.maximum(0, -origin), 0)


def run(params: PoolParams, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, output]."""
    p = params
    x, out = buffers[0], buffers[1]
    if p.counts is not None:  # average
        win = windows(x.astype(np.int64), p.kernel, p.stride, (1, 1), p.pad, p.out_hw, 0)
        acc = win.sum(axis=(4, 5))
        half = p.counts // 2
        # (acc + count/2) / count for acc > 0, (acc - count/2) / count otherwise,
        # both with C's truncating division.
        y = np.where(acc > 0, c.c_div(acc + half, p.counts), c.c_div(acc - half, p.counts))
    else:
        # -128 padding never wins: TFLM starts its running max at -128 too.
        y = windows(x, p.kernel, p.stride, (1, 1), p.pad, p.out_hw, -128).max(axis=(4, 5))
    out[...] = c.clamp_to_int8(y, p.act_min, p.act_max)
