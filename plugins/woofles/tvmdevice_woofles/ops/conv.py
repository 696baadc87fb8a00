"""CONV_2D and DEPTHWISE_CONV_2D: validation and parameters for the woofles kernels.

The quantization parameters follow TFLM's PopulateConvolutionQuantizationParams:
one multiplier per output channel from ``input_scale * filter_scale[c] /
output_scale`` in double precision (the scales being the stored float32
values), whether the filter is per-channel or per-tensor quantized.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from tvmdevice.aot.ir import Graph, Operator, Tensor
from tvmdevice.quantization import quantize_multipliers

from .common import (
    Refusal,
    activation_range,
    check_elements,
    check_fits_sram,
    check_limit,
    check_shifts,
    int8_per_tensor,
    operands,
    out_size,
    padding,
)

__all__ = ["ConvPlan", "plan"]


@dataclass(frozen=True)
class ConvPlan:
    """Everything ``tvmd_woofles_conv_params_t`` holds, validated."""

    depthwise: bool
    batches: int
    in_h: int
    in_w: int
    in_ch: int
    out_h: int
    out_w: int
    out_ch: int
    filter_h: int
    filter_w: int
    filter_in_ch: int
    depth_multiplier: int
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    pad_h: int
    pad_w: int
    input_offset: int
    output_offset: int
    act_min: int
    act_max: int
    num_inputs: int
    multiplier: np.ndarray  # int32 [out_ch]
    shift: np.ndarray  # int32 [out_ch]


def _filter_scales(filt: Tensor, out_ch: int, axis: int) -> list[float]:
    if np.dtype(filt.dtype) != np.int8 or filt.quant is None:
        raise Refusal(f"filter tensor {filt.index} must be int8 and quantized")
    q = filt.quant
    if np.any(q.zero_point != 0):
        # TFLM's per-channel convolution ignores a filter zero point, so a
        # non-zero one cannot be reproduced bit-exactly; refuse it.
        raise Refusal(f"filter tensor {filt.index} has a non-zero zero point")
    if q.per_channel and (q.axis != axis or q.scale.size != out_ch):
        raise Refusal(f"filter tensor {filt.index} is quantized along axis {q.axis} with {q.scale.size} "
                      f"scales; expected axis {axis} with {out_ch}")
    scales = q.scale if q.per_channel else np.repeat(q.scale[:1], out_ch)
    return [float(np.float32(s)) for s in scales]


def plan(graph: Graph, op: Operator, options: dict[str, Any]) -> ConvPlan:
    """Validate a CONV_2D or DEPTHWISE_CONV_2D against the NPU's limits; compute its parameters.

    :raises Refusal: with the reason, for anything the NPU cannot run.
    """
    depthwise = op.type == "DEPTHWISE_CONV_2D"
    (inp, filt), optional, out = operands(graph, op, 2, 1)
    bias = optional[0] if optional else None
    for t, role in ((inp, "input"), (filt, "filter"), (out, "output")):
        if len(t.shape) != 4:
            raise Refusal(f"{role} tensor {t.index} is {len(t.shape)}-D; the NPU convolves NHWC 4-D tensors")
        check_elements(t, role)
    o = op.options
    stride = (int(o.get("stride_h", 1)), int(o.get("stride_w", 1)))
    dilation = (int(o.get("dilation_h_factor", 1)), int(o.get("dilation_w_factor", 1)))
    if min(stride) < 1 or min(dilation) < 1:
        raise Refusal(f"strides {stride} and dilations {dilation} must be >= 1")
    check_limit(max(dilation), int(options["max_dilation"]), "dilation", "max_dilation")
    batches, in_h, in_w, in_ch = (int(d) for d in inp.shape)
    filter_h, filter_w = int(filt.shape[1]), int(filt.shape[2])
    check_limit(max(filter_h, filter_w), int(options["max_kernel"]), "filter size", "max_kernel")
    if depthwise:
        out_ch = int(filt.shape[3])
        if int(filt.shape[0]) != 1 or out_ch % in_ch:
            raise Refusal(f"depthwise filter shape {list(filt.shape)} does not fit {in_ch} input channels")
        depth_multiplier, filter_in_ch, quant_axis = out_ch // in_ch, 1, 3
        if int(o.get("depth_multiplier", depth_multiplier)) != depth_multiplier:
            raise Refusal(f"depth_multiplier {o['depth_multiplier']} disagrees with {in_ch} -> {out_ch} channels")
    else:
        out_ch, filter_in_ch = int(filt.shape[0]), int(filt.shape[3])
        if in_ch % filter_in_ch or out_ch % (in_ch // filter_in_ch):
            raise Refusal(f"filter shape {list(filt.shape)} does not fit {in_ch} input channels")
        depth_multiplier, quant_axis = 1, 0
    check_limit(max(in_ch, out_ch), int(options["max_channels"]), "channel count", "max_channels")
    out_h = out_size(o.get("padding", "VALID"), in_h, filter_h, stride[0], dilation[0])
    out_w = out_size(o.get("padding", "VALID"), in_w, filter_w, stride[1], dilation[1])
    if tuple(out.shape) != (batches, out_h, out_w, out_ch) or min(out_h, out_w) <= 0:
        raise Refusal(f"output shape {list(out.shape)} disagrees with the computed "
                      f"{[batches, out_h, out_w, out_ch]}")
    if bias is not None and (np.dtype(bias.dtype) != np.int32 or int(np.prod(bias.shape)) != out_ch):
        raise Refusal(f"bias tensor {bias.index} must be int32 with {out_ch} elements")
    in_scale, in_zp = int8_per_tensor(inp, "input")
    out_scale, out_zp = int8_per_tensor(out, "output")
    real = [in_scale * s / out_scale for s in _filter_scales(filt, out_ch, quant_axis)]
    multiplier, shift = quantize_multipliers(np.array(real, dtype=np.float64))
    check_shifts(shift)
    act_min, act_max = activation_range(o.get("fused_activation", "NONE"), out_scale, out_zp)
    check_fits_sram([inp, filt, bias, out], options)
    return ConvPlan(
        depthwise=depthwise, batches=batches, in_h=in_h, in_w=in_w, in_ch=in_ch, out_h=out_h, out_w=out_w,
        out_ch=out_ch, filter_h=filter_h, filter_w=filter_w, filter_in_ch=filter_in_ch,
        depth_multiplier=depth_multiplier, stride_h=stride[0], stride_w=stride[1], dilation_h=dilation[0],
        dilation_w=dilation[1], pad_h=padding(stride[0], dilation[0], in_h, filter_h, out_h),
        pad_w=padding(stride[1], dilation[1], in_w, filter_w, out_w), input_offset=-in_zp, output_offset=out_zp,
        act_min=act_min, act_max=act_max, num_inputs=2 + len(optional),
        multiplier=multiplier.astype(np.int32), shift=shift.astype(np.int32),
    )
