"""CONV_2D and DEPTHWISE_CONV_2D, int8 with per-channel (or per-tensor) weights.

Bit-exact with TFLM's reference_integer_ops::ConvPerChannel and
DepthwiseConvPerChannel, run on :class:`tvmdevice.ops.ConvData`.  TFLM skips
taps that fall outside the image; here the zero-point-corrected input is
padded with zeros, which adds exactly nothing for those taps.  Dot products
run in float64: every partial sum is an integer below 2**53 (|x - zp| <= 255,
|w| <= 128), so BLAS is exact and the int32 accumulator is recovered without
rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvmdevice.kernel import PreparedCall
from tvmdevice.ops import ConvData
from tvmdevice.testing.reference import _common as c
from tvmdevice.windows import effective_size

__all__ = ["build", "run", "windows", "accumulate"]


def windows(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int], dilation: tuple[int, int],
            pad: tuple[int, int], out_hw: tuple[int, int], fill: float) -> np.ndarray:
    """Sliding windows over NHWC ``x``: shape (N, OH, OW, C, KH, KW).

    ``x`` is padded with ``fill`` by ``pad`` before the image and as much as
    the last window needs after it, so window (oy, ox) starts at input row
    ``oy * stride - pad`` exactly as in TFLM's loops.
    """
    n, h, w, ch = x.shape
    (kh, kw), (sh, sw), (dh, dw), (ph, pw), (oh, ow) = kernel, stride, dilation, pad, out_hw
    eff_h, eff_w = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    need_h = (oh - 1) * sh + eff_h
    need_w = (ow - 1) * sw + eff_w
    padded = np.full((n, max(need_h, ph + h), max(need_w, pw + w), ch), fill, dtype=x.dtype)
    padded[:, ph:ph + h, pw:pw + w, :] = x
    view = np.lib.stride_tricks.sliding_window_view(padded[:, :need_h, :need_w, :], (eff_h, eff_w), axis=(1, 2))
    return view[:, ::sh, ::sw, :, ::dh, ::dw][:, :oh, :ow]


def build(data: ConvData) -> PreparedCall:
    """The host call for CONV_2D / DEPTHWISE_CONV_2D op data (refused if its padded input is too large)."""
    extent = (effective_size(data.filter_h, data.dilation_h), effective_size(data.filter_w, data.dilation_w))
    c.check_window_extent(data, (data.batches, data.in_h, data.in_w, data.in_ch), extent)
    return PreparedCall(name="depthwise_conv2d_s8" if data.depthwise else "conv2d_s8", kernel=run, params=data)


def run(params: ConvData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, filter, bias or None, output]."""
    c.finish_int8(params, buffers, c.wrap_i32(accumulate(params, buffers[0], buffers[1])))


def accumulate(p: ConvData, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The exact sums of (input + input_offset) * filter per output (int64, NHWC), before any wrap.

    Exact in float64 while each sum stays below 2**53 (int8 and int16 inputs, int8 filters).
    """
    xs = x.astype(np.float64) + p.input_offset
    kernel = (p.filter_h, p.filter_w)
    win = windows(xs, kernel, (p.stride_h, p.stride_w), (p.dilation_h, p.dilation_w), (p.pad_h, p.pad_w),
                  (p.out_h, p.out_w), 0.0)  # N,OH,OW,C,KH,KW
    n, oh, ow = win.shape[:3]
    if p.depthwise:
        ch = x.shape[3]
        wt = w.astype(np.float64).reshape(p.filter_h, p.filter_w, ch, p.depth_multiplier)
        acc = np.einsum("nhwckl,klcm->nhwcm", win, wt).reshape(n, oh, ow, ch * p.depth_multiplier)
    else:
        out_ch, kh, kw, group_ch = w.shape
        per_group = out_ch // p.groups
        wf = w.astype(np.float64)
        parts = []
        for g in range(p.groups):
            cols = win[:, :, :, g * group_ch:(g + 1) * group_ch]  # N,OH,OW,Cg,KH,KW
            cols = cols.transpose(0, 1, 2, 4, 5, 3).reshape(n * oh * ow, kh * kw * group_ch)
            wg = wf[g * per_group:(g + 1) * per_group].reshape(per_group, kh * kw * group_ch)
            parts.append(cols @ wg.T)
        acc = np.concatenate(parts, axis=1).reshape(n, oh, ow, out_ch)
    return np.rint(acc).astype(np.int64)
