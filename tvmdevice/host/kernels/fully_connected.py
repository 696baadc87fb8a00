"""FULLY_CONNECTED, int8, per-tensor or per-channel weights, any batch count.

Bit-exact with TFLM's reference_integer_ops::FullyConnected (per-tensor) and
FullyConnectedPerChannel.  The per-tensor multiplier follows TFLM's
GetQuantizedConvolutionMultipler, which multiplies the two scales in float32
before widening; the per-channel one multiplies in double.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.host.kernels import _common as c
from tvmdevice.kernel import PreparedCall
from tvmdevice.quantization import quantize_multipliers

__all__ = ["prepare", "FullyConnectedParams"]


@dataclass(frozen=True)
class FullyConnectedParams:
    """Prepared FULLY_CONNECTED parameters."""

    batches: int
    accum_depth: int
    input_zero_point: int
    filter_zero_point: int
    output_zero_point: int
    multiplier: np.ndarray  # int32, one per output channel
    shift: np.ndarray
    act_min: int
    act_max: int


def prepare(graph: Graph, op: Operator) -> PreparedCall:
    """Validate a FULLY_CONNECTED operator and compute its parameters."""
    (inp, filt), (bias,), out = c.operands(graph, op, 2, 1)
    if len(filt.shape) != 2:
        raise c.malformed(op, f"weights tensor {filt.index} must be 2-D, has shape {list(filt.shape)}")
    out_ch, accum_depth = filt.shape
    if len(out.shape) < 1 or out.shape[-1] != out_ch:
        raise c.malformed(op, f"output tensor {out.index} shape {list(out.shape)} must end in {out_ch}")
    batches = int(np.prod(out.shape[:-1], dtype=np.int64))
    in_size = int(np.prod(inp.shape, dtype=np.int64))
    if accum_depth == 0 or in_size != batches * accum_depth:
        raise c.malformed(op, f"input tensor {inp.index} has {in_size} elements, expected "
                              f"{batches} batches x {accum_depth}")
    if bias is not None and (bias.dtype != np.int32 or int(np.prod(bias.shape)) != out_ch):
        raise c.malformed(op, f"bias tensor {bias.index} must be int32 with {out_ch} elements")
    in_scale, in_zp = c.per_tensor(op, inp, "input")
    out_scale, out_zp = c.per_tensor(op, out, "output")
    if filt.dtype != np.int8 or filt.quant is None:
        raise c.unsupported(op, f"weights tensor {filt.index} must be int8 and quantized")
    q = filt.quant
    if q.per_channel:
        if q.axis != 0 or q.scale.size != out_ch:
            raise c.unsupported(op, f"weights tensor {filt.index} must be quantized along axis 0")
        if np.any(q.zero_point != 0):
            raise c.unsupported(op, f"per-channel weights tensor {filt.index} has a non-zero zero point")
        if len(out.shape) != 2:
            # TFLM's per-channel kernel reads the batch count from dimension 0.
            raise c.unsupported(op, "per-channel weights need a 2-D output (keep_num_dims with rank > 2)")
        real = [float(in_scale) * float(np.float32(s)) / float(out_scale) for s in q.scale]
        filter_zp = 0
    else:
        filter_scale = np.float32(q.scale[0])
        filter_zp = int(q.zero_point[0])
        if not -128 <= filter_zp <= 127:
            raise c.unsupported(op, f"weights zero point {filter_zp} is outside the int8 range")
        product = float(np.float32(in_scale) * filter_scale)  # float32 product, as TFLM
        if bias is not None and bias.quant is not None:
            # TFLM refuses a bias whose scale strays from input*weights scale.
            bias_scale = float(np.float32(bias.quant.scale[0]))
            exact = float(in_scale) * float(filter_scale)
            if abs(exact - bias_scale) / float(out_scale) > 0.02:
                raise c.unsupported(op, f"bias scale {bias_scale} does not match input*weights scale {exact}")
        real = [product / float(out_scale)] * out_ch
    multiplier, shift = quantize_multipliers(np.array(real, dtype=np.float64))
    act_min, act_max = c.activation_range(op, op.options.get("fused_activation", "NONE"), out_scale, out_zp)
    params = FullyConnectedParams(batches, accum_depth, in_zp, filter_zp, out_zp, multiplier, shift,
                                  act_min, act_max)
    return PreparedCall(name="fully_connected_s8", kernel=run, params=params)


def run(params: FullyConnectedParams, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, weights, bias or None, output]."""
    p = params
    x = buffers[0].reshape(p.batches, p.accum_depth).astype(np.float64) - p.input_zero_point
    w = buffers[1].astype(np.float64) - p.filter_zero_point
    bias = buffers[2] if len(buffers) == 4 else None
    out = buffers[-1]
    # float64 is exact here: |x|, |w| <= 255 and sums stay far below 2**53.
    acc = c.wrap_i32(np.rint(x @ w.T).astype(np.int64))
    if bias is not None:
        acc = acc + bias.reshape(-1).astype(np.int64)
    y = c.requantize(acc, p.multiplier, p.shift) + p.output_zero_point
    out[...] = c.clamp_to_int8(y, p.act_min, p.act_max).reshape(out.shape)
