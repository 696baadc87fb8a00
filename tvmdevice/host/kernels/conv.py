"""CONV_2D and DEPTHWISE_CONV_2D, int8 with per-channel (or per-tensor) weights.

Bit-exact with TFLM's reference_integer_ops::ConvPerChannel and
DepthwiseConvPerChannel.  TFLM skips taps that fall outside the image; here
the zero-point-corrected input is padded with zeros, which adds exactly
nothing for those taps.  Dot products run in float64: every partial sum is an
integer below 2**53 (|x - zp| <= 255, |w| <= 128), so BLAS is exact and the
int32 accumulator is recovered without rounding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tvmdevice.aot.ir import Graph, Operator, Tensor
from tvmdevice.host.kernels import _common as c
from tvmdevice.kernel import PreparedCall
from tvmdevice.quantization import quantize_multipliers
from tvmdevice.windows import effective_size, leading_padding, out_size

__all__ = ["prepare", "ConvParams", "windows"]


@dataclass(frozen=True)
class ConvParams:
    """Prepared CONV_2D / DEPTHWISE_CONV_2D parameters (all data-independent)."""

    depthwise: bool
    stride: tuple[int, int]
    dilation: tuple[int, int]
    pad: tuple[int, int]  # leading (top, left) padding
    kernel: tuple[int, int]
    out_hw: tuple[int, int]
    groups: int
    depth_multiplier: int
    input_zero_point: int
    output_zero_point: int
    multiplier: np.ndarray  # int32 per output channel
    shift: np.ndarray  # int32 per output channel
    act_min: int
    act_max: int


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


def prepare(graph: Graph, op: Operator) -> PreparedCall:
    """Validate a CONV_2D or DEPTHWISE_CONV_2D operator and compute its parameters."""
    depthwise = op.type == "DEPTHWISE_CONV_2D"
    (inp, filt), (bias,), out = c.operands(graph, op, 2, 1)
    o = op.options
    for t, role in ((inp, "input"), (filt, "filter"), (out, "output")):
        if len(t.shape) != 4:
            raise c.malformed(op, f"{role} tensor {t.index} must be 4-D, has shape {list(t.shape)}")
    stride = (int(o["stride_h"]), int(o["stride_w"]))
    dilation = (int(o["dilation_h_factor"]), int(o["dilation_w_factor"]))
    if min(stride) < 1 or min(dilation) < 1:
        raise c.malformed(op, f"strides {stride} and dilations {dilation} must be >= 1")
    n, h, w, in_ch = inp.shape
    if depthwise:
        if filt.shape[0] != 1:
            raise c.malformed(op, f"depthwise filter must have shape [1, KH, KW, C*M], has {list(filt.shape)}")
        out_ch = filt.shape[3]
        if out_ch % in_ch:
            raise c.malformed(op, f"{out_ch} output channels is not a multiple of {in_ch} input channels")
        depth_multiplier, groups = out_ch // in_ch, 1
        # TFLM loops over the option's value; a disagreeing one would index
        # outside the filter, so it is refused.
        if int(o.get("depth_multiplier", depth_multiplier)) != depth_multiplier:
            raise c.malformed(op, f"depth_multiplier {o['depth_multiplier']} disagrees with the shapes "
                                  f"({in_ch} -> {out_ch} channels)")
        quant_axis = 3
    else:
        out_ch = filt.shape[0]
        if in_ch % filt.shape[3] or out_ch % (in_ch // filt.shape[3]):
            raise c.malformed(op, f"filter shape {list(filt.shape)} does not fit {in_ch} input channels")
        depth_multiplier, groups = 1, in_ch // filt.shape[3]
        quant_axis = 0
    kernel = (filt.shape[1], filt.shape[2])
    oh = out_size(o["padding"], h, kernel[0], stride[0], dilation[0])
    ow = out_size(o["padding"], w, kernel[1], stride[1], dilation[1])
    c.check_shape(op, out, (n, oh, ow, out_ch), "output")
    if min(oh, ow, n, out_ch) <= 0:
        raise c.malformed(op, f"output shape {list(out.shape)} is empty")
    extent = (effective_size(kernel[0], dilation[0]), effective_size(kernel[1], dilation[1]))
    c.check_window_extent(op, inp.shape, extent)
    pad = (leading_padding(stride[0], dilation[0], h, kernel[0], oh),
           leading_padding(stride[1], dilation[1], w, kernel[1], ow))
    if bias is not None:
        if bias.dtype != np.int32 or int(np.prod(bias.shape)) != out_ch:
            raise c.malformed(op, f"bias tensor {bias.index} must be int32 with {out_ch} elements")
    in_scale, in_zp = c.per_tensor(op, inp, "input")
    out_scale, out_zp = c.per_tensor(op, out, "output")
    filter_scales = _filter_scales(op, filt, out_ch, quant_axis)
    real = [float(in_scale) * float(s) / float(out_scale) for s in filter_scales]
    multiplier, shift = quantize_multipliers(np.array(real, dtype=np.float64))
    act_min, act_max = c.activation_range(op, o["fused_activation"], out_scale, out_zp)
    params = ConvParams(depthwise, stride, dilation, pad, kernel, (oh, ow), groups, depth_multiplier,
                        in_zp, out_zp, multiplier, shift, act_min, act_max)
    name = "depthwise_conv2d_s8" if depthwise else "conv2d_s8"
    return PreparedCall(name=name, kernel=run, params=params)


def _filter_scales(op: Operator, filt: Tensor, out_ch: int, axis: int) -> list[float]:
    if filt.dtype != np.int8 or filt.quant is None:
        raise c.unsupported(op, f"filter tensor {filt.index} must be int8 and quantized")
    q = filt.quant
    if np.any(q.zero_point != 0):
        # TFLM's per-channel kernels ignore the filter zero point; a non-zero
        # one would be silently wrong, so it is refused.
        raise c.unsupported(op, f"filter tensor {filt.index} has a non-zero zero point")
    if q.per_channel and (q.axis != axis or q.scale.size != out_ch):
        raise c.unsupported(op, f"filter tensor {filt.index} is quantized along axis {q.axis} with "
                                f"{q.scale.size} scales; expected axis {axis} with {out_ch}")
    scales = q.scale if q.per_channel else np.repeat(q.scale[:1], out_ch)
    return [float(np.float32(s)) for s in scales]


def run(params: ConvParams, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, filter, bias or None, output]."""
    p = params
    x, w = buffers[0], buffers[1]
    bias = buffers[2] if len(buffers) == 4 else None
    out = buffers[-1]
    xs = x.astype(np.float64) - p.input_zero_point
    win = windows(xs, p.kernel, p.stride, p.dilation, p.pad, p.out_hw, 0.0)  # N,OH,OW,C,KH,KW
    n, oh, ow = win.shape[:3]
    if p.depthwise:
        ch = x.shape[3]
        wt = w.astype(np.float64).reshape(p.kernel[0], p.kernel[1], ch, p.depth_multiplier)
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
    acc = c.wrap_i32(np.rint(acc).astype(np.int64))
    if bias is not None:
        acc = acc + bias.reshape(-1).astype(np.int64)
    y = c.requantize(acc, p.multiplier, p.shift) + p.output_zero_point
    out[...] = c.clamp_to_int8(y, p.act_min, p.act_max)
