"""AVERAGE_POOL_2D and MAX_POOL_2D: validation and parameters for the woofles kernels.

TFLM pools int8 without rescaling, so input and output must share scale and
zero point; the fused activation becomes a clamp.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvmdevice.aot.ir import Graph, Operator

from .common import (
    Refusal,
    activation_range,
    check_elements,
    check_fits_sram,
    check_limit,
    int8_per_tensor,
    operands,
    out_size,
    padding,
)

__all__ = ["PoolPlan", "plan"]


@dataclass(frozen=True)
class PoolPlan:
    """Everything ``tvmd_woofles_pool_params_t`` holds, validated."""

    average: bool
    batches: int
    in_h: int
    in_w: int
    channels: int
    out_h: int
    out_w: int
    filter_h: int
    filter_w: int
    stride_h: int
    stride_w: int
    pad_h: int
    pad_w: int
    act_min: int
    act_max: int


def plan(graph: Graph, op: Operator, options: dict[str, Any]) -> PoolPlan:
    """Validate a pooling operator against the NPU's limits; compute its parameters.

    :raises Refusal: with the reason, for anything the NPU cannot run.
    """
    (inp,), _, out = operands(graph, op, 1)
    if len(inp.shape) != 4:
        raise Refusal(f"input tensor {inp.index} is {len(inp.shape)}-D; the NPU pools NHWC 4-D tensors")
    check_elements(inp, "input")
    o = op.options
    stride = (int(o.get("stride_h", 1)), int(o.get("stride_w", 1)))
    kernel = (int(o.get("filter_height", 1)), int(o.get("filter_width", 1)))
    if min(stride) < 1 or min(kernel) < 1:
        raise Refusal(f"strides {stride} and window {kernel} must be >= 1")
    check_limit(max(kernel), int(options["max_kernel"]), "pooling window", "max_kernel")
    batches, in_h, in_w, ch = (int(d) for d in inp.shape)
    check_limit(ch, int(options["max_channels"]), "channel count", "max_channels")
    out_h = out_size(o.get("padding", "VALID"), in_h, kernel[0], stride[0])
    out_w = out_size(o.get("padding", "VALID"), in_w, kernel[1], stride[1])
    if tuple(out.shape) != (batches, out_h, out_w, ch) or min(out_h, out_w) <= 0:
        raise Refusal(f"output shape {list(out.shape)} disagrees with the computed {[batches, out_h, out_w, ch]}")
    pad_h = padding(stride[0], 1, in_h, kernel[0], out_h)
    pad_w = padding(stride[1], 1, in_w, kernel[1], out_w)
    # A window wholly inside the padding makes TFLM's AveragePool fail; the
    # NPU refuses it up front.  The last window starts furthest from the image.
    if (out_h - 1) * stride[0] - pad_h >= in_h or (out_w - 1) * stride[1] - pad_w >= in_w:
        raise Refusal("a pooling window lies entirely in the padding")
    in_scale, in_zp = int8_per_tensor(inp, "input")
    out_scale, out_zp = int8_per_tensor(out, "output")
    if in_zp != out_zp or abs(in_scale - out_scale) > 1e-6 * max(in_scale, out_scale):
        raise Refusal(f"input and output quantization differ ({in_scale}/{in_zp} vs {out_scale}/{out_zp}); "
                      f"pooling does not rescale")
    act_min, act_max = activation_range(o.get("fused_activation", "NONE"), out_scale, out_zp)
    check_fits_sram([inp, out], options)
    return PoolPlan(
        average=op.type == "AVERAGE_POOL_2D", batches=batches, in_h=in_h, in_w=in_w, channels=ch, out_h=out_h,
        out_w=out_w, filter_h=kernel[0], filter_w=kernel[1], stride_h=stride[0], stride_w=stride[1], pad_h=pad_h,
        pad_w=pad_w, act_min=act_min, act_max=act_max,
    )
