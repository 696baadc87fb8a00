"""FULLY_CONNECTED: TFLM's Prepare (``fully_connected_common.cc``).

The multiplier is ``input_scale * weights_scale / output_scale`` in double
from the float32 scales, per tensor or per channel.  (TFLite's
GetQuantizedConvolutionMultipler source multiplies the two scales in float32
first, but the tflite-micro we are bit-exact with rounds as the double product
does: the differential fuzzer found a real model's output, and 1 in ~100,000
outputs of random inputs, where only the double product agrees.)  Per-tensor
weights keep their zero point; per-channel weights must have zero points of 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, INT32, OpData, Operand, Signature

__all__ = ["FullyConnectedData", "SIGNATURE", "validate", "analyze"]

SIGNATURE = Signature(
    (Operand("input", INT8), Operand("weights", INT8, constant=True),
     Operand("bias", INT32, constant=True, optional=True)),
    (Operand("output", INT8),), ("fused_activation", "keep_num_dims"))

#: TFLM refuses a bias whose scale strays from input * weights scale by more
#: than this fraction of the output scale (GetQuantizedConvolutionMultipler).
_BIAS_SCALE_TOLERANCE = 0.02


def _check_bias_scale(op: Operator, bias: Tensor, in_scale: float, filter_scale: float, out_scale: float) -> None:
    """TFLM's bias rule for per-tensor weights (GetQuantizedConvolutionMultipler, ``kernel_util.cc``).

    ``|input scale * weights scale - bias scale| / output scale <= 0.02``, in
    double from the float32 scales.  TFLM reads the bias scale from
    ``params.scale``, which stays 0 when the bias has no quantization: such a
    bias is refused exactly when input * weights scale exceeds 2% of the
    output scale.  Per-channel weights skip the check (TFLM computes their
    multipliers without it), as do CONV_2D and DEPTHWISE_CONV_2D.
    """
    quantized = bias.quant is not None and bias.quant.scale.size > 0
    bias_scale = float(np.float32(bias.quant.scale[0])) if quantized else 0.0  # type: ignore[union-attr]
    product = in_scale * filter_scale
    if not abs(product - bias_scale) / out_scale <= _BIAS_SCALE_TOLERANCE:
        what = f"bias scale {bias_scale}" if quantized else f"bias tensor {bias.index} is not quantized (scale 0) and"
        raise c.refuse(op, f"{what} differs from input*weights scale {product} by more than "
                           f"{_BIAS_SCALE_TOLERANCE:.0%} of the output scale {out_scale}; TFLM's prepare refuses it")


@dataclass(frozen=True, eq=False)
class FullyConnectedData(OpData):
    """FULLY_CONNECTED op data; weights are ``[out_ch, accum_depth]``."""

    num_inputs: int
    has_bias: bool
    batches: int
    accum_depth: int
    out_ch: int
    input_offset: int
    filter_offset: int  # -weights zero point (0 when per-channel)
    output_offset: int
    per_channel: bool
    multiplier: np.ndarray  # int32 [out_ch] (per-tensor repeated)
    shift: np.ndarray
    act_min: int
    act_max: int
    macs: int


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, Tensor | None, Tensor, int, int, int]:
    (inp, filt), (bias,), out = c.operands(graph, op, 2, 1)
    if len(filt.shape) != 2:
        raise c.malformed(op, f"weights tensor {filt.index} must be 2-D, has shape {list(filt.shape)}")
    out_ch, depth = (int(d) for d in filt.shape)
    if len(out.shape) < 1 or int(out.shape[-1]) != out_ch:
        raise c.malformed(op, f"output tensor {out.index} shape {list(out.shape)} must end in {out_ch}")
    batches = c.count(out.shape[:-1])
    if c.count(inp.shape) != batches * depth:
        raise c.malformed(op, f"input tensor {inp.index} has {c.count(inp.shape)} elements, expected "
                              f"{batches} batches x {depth}")
    c.bias(op, bias, out_ch)
    return inp, filt, bias, out, batches, depth, out_ch


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, 2-D weights, input/output element counts, the bias."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> FullyConnectedData:
    """TFLM's Prepare for FULLY_CONNECTED."""
    inp, filt, bias, out, batches, depth, out_ch = _parts(graph, op)
    in_scale, in_zp = c.per_tensor_int8(op, inp, "input")
    out_scale, out_zp = c.per_tensor_int8(op, out, "output")
    if np.dtype(filt.dtype) != np.int8 or filt.quant is None or filt.quant.scale.size == 0:
        raise c.refuse(op, f"weights tensor {filt.index} must be quantized int8")
    q = filt.quant
    per_channel = q.scale.size > 1
    if per_channel:
        scales = c.filter_scales(op, filt, out_ch, axis=0, role="weights")
        if len(out.shape) != 2:
            # TFLM's per-channel kernel reads the batch count from dimension 0.
            raise c.refuse(op, "per-channel weights need a 2-D output (keep_num_dims with rank > 2)")
        real = [in_scale * s / out_scale for s in scales]
        filter_offset = 0
    else:
        filter_zp = int(q.zero_point[0])  # in the int8 range: checked with the operands
        filter_scale = np.float32(q.scale[0])
        if bias is not None:
            _check_bias_scale(op, bias, in_scale, float(filter_scale), out_scale)
        real = [in_scale * float(filter_scale) / out_scale] * out_ch  # the double product (module docstring)
        filter_offset = -filter_zp
    mult, shift = c.multipliers(op, real)
    act_min, act_max = c.activation_range(op, op.options.get("fused_activation", "NONE"), out_scale, out_zp)
    return FullyConnectedData(
        op_index=op.index, op_type=op.type, num_inputs=len(op.inputs), has_bias=bias is not None,
        batches=batches, accum_depth=depth, out_ch=out_ch, input_offset=-in_zp, filter_offset=filter_offset,
        output_offset=out_zp, per_channel=per_channel, multiplier=mult, shift=shift, act_min=act_min,
        act_max=act_max, macs=batches * out_ch * depth)
