"""FULLY_CONNECTED: validation and parameters for the woofles kernel.

Follows TFLM's CalculateOpDataFullyConnected: per-tensor weights take one
multiplier from ``float32(input_scale * weights_scale) / output_scale``
(GetQuantizedConvolutionMultipler multiplies the scales in float32) and keep
the weights zero point; per-channel weights take one multiplier per output
neuron in double, with zero point 0.  The kernel always reads a per-neuron
table, so per-tensor plans repeat the single value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from tvmdevice.aot.ir import Graph, Operator
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
)

__all__ = ["FullyConnectedPlan", "plan"]

# TFLM's GetQuantizedConvolutionMultipler refuses a bias whose scale differs
# from input_scale * weights_scale by more than this fraction of the output scale.
_BIAS_SCALE_TOLERANCE = 0.02


@dataclass(frozen=True)
class FullyConnectedPlan:
    """Everything ``tvmd_woofles_fc_params_t`` holds, validated."""

    batches: int
    accum_depth: int
    out_ch: int
    input_offset: int
    filter_offset: int
    output_offset: int
    act_min: int
    act_max: int
    num_inputs: int
    multiplier: np.ndarray  # int32 [out_ch]
    shift: np.ndarray  # int32 [out_ch]


def plan(graph: Graph, op: Operator, options: dict[str, Any]) -> FullyConnectedPlan:
    """Validate a FULLY_CONNECTED against the NPU's limits; compute its parameters.

    :raises Refusal: with the reason, for anything the NPU cannot run.
    """
    (inp, filt), optional, out = operands(graph, op, 2, 1)
    bias = optional[0] if optional else None
    if len(filt.shape) != 2:
        raise Refusal(f"weights tensor {filt.index} must be 2-D, has shape {list(filt.shape)}")
    out_ch, accum_depth = int(filt.shape[0]), int(filt.shape[1])
    for t, role in ((inp, "input"), (filt, "weights"), (out, "output")):
        check_elements(t, role)
    if len(out.shape) < 1 or int(out.shape[-1]) != out_ch:
        raise Refusal(f"output tensor {out.index} shape {list(out.shape)} must end in {out_ch}")
    batches = int(np.prod(out.shape[:-1], dtype=np.int64))
    if int(np.prod(inp.shape, dtype=np.int64)) != batches * accum_depth:
        raise Refusal(f"input tensor {inp.index} shape {list(inp.shape)} is not {batches} x {accum_depth}")
    check_limit(max(out_ch, accum_depth), int(options["max_channels"]), "channel count", "max_channels")
    if bias is not None and (np.dtype(bias.dtype) != np.int32 or int(np.prod(bias.shape)) != out_ch):
        raise Refusal(f"bias tensor {bias.index} must be int32 with {out_ch} elements")
    in_scale, in_zp = int8_per_tensor(inp, "input")
    out_scale, out_zp = int8_per_tensor(out, "output")
    if np.dtype(filt.dtype) != np.int8 or filt.quant is None:
        raise Refusal(f"weights tensor {filt.index} must be int8 and quantized")
    q = filt.quant
    if q.per_channel:
        if q.axis != 0 or q.scale.size != out_ch or np.any(q.zero_point != 0):
            raise Refusal(f"per-channel weights tensor {filt.index} must be quantized along axis 0 "
                          f"with zero point 0")
        if len(out.shape) != 2:
            # TFLM's per-channel kernel takes its batch count from dimension 0 only.
            raise Refusal("per-channel weights need a 2-D output")
        real = [in_scale * float(np.float32(s)) / out_scale for s in q.scale]
        filter_zp = 0
    else:
        filter_zp = int(q.zero_point[0])
        if not -128 <= filter_zp <= 127:
            raise Refusal(f"weights zero point {filter_zp} is outside int8")
        w_scale = np.float32(q.scale[0])
        product = float(np.float32(in_scale) * w_scale)
        if bias is not None and bias.quant is not None and bias.quant.scale.size:
            bias_scale = float(np.float32(bias.quant.scale[0]))
            if abs(product - bias_scale) / out_scale > _BIAS_SCALE_TOLERANCE:
                raise Refusal(f"bias scale {bias_scale} does not match input*weights scale {product}")
        real = [product / out_scale] * out_ch
    multiplier, shift = quantize_multipliers(np.array(real, dtype=np.float64))
    check_shifts(shift)
    act_min, act_max = activation_range(op.options.get("fused_activation", "NONE"), out_scale, out_zp)
    check_fits_sram([inp, filt, bias, out], options)
    return FullyConnectedPlan(
        batches=batches, accum_depth=accum_depth, out_ch=out_ch, input_offset=-in_zp, filter_offset=-filter_zp,
        output_offset=out_zp, act_min=act_min, act_max=act_max, num_inputs=2 + len(optional),
        multiplier=multiplier.astype(np.int32), shift=shift.astype(np.int32),
    )
