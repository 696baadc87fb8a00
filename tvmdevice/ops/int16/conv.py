"""CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED on int16 activations (int16x8): TFLM's Prepare and bias rules.

The geometry and the multipliers are the int8 analyses' (``conv_common.cc``,
``fully_connected_common.cc``); what differs:

* input and output are int16 with zero point 0 (TFLM's int16 kernels add no
  input or output offset, so any other zero point is refused);
* the bias is int64 (the converter's choice) or int32.  TFLM accumulates in
  the bias type: an int64 bias sums in int64 and requantizes with the 64-bit
  MultiplyByQuantizedMultiplier (one rounding, a 16-bit multiplier), an
  int32 bias sums in int32 and requantizes with the 32-bit one.  Without a
  bias all three take the 64-bit path, as the tflite-micro build the tests
  run against does (FULLY_CONNECTED too: its 32-bit requantization differs
  from TFLM's output by one in a few values per hundred, found by the
  cmsis-nn int16 property tests).
  DEPTHWISE_CONV_2D reads any bias as int64, so an int32 one is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops import conv as base_conv
from tvmdevice.ops import fully_connected as base_fc
from tvmdevice.ops.int16 import _checks as c16

__all__ = ["Conv16Data", "FullyConnected16Data", "MAX_WIDE_SHIFT", "validate_conv", "validate_fully_connected",
           "analyze_conv", "analyze_fully_connected"]

#: The 64-bit requantization shifts right by ``15 - shift``: a left shift past 14 has no meaning there.
MAX_WIDE_SHIFT = 14


@dataclass(frozen=True, eq=False)
class Conv16Data(base_conv.ConvData):
    """CONV_2D / DEPTHWISE_CONV_2D op data on int16 activations.

    :ivar bias_bits: 64: int64 accumulation and requantization; 32: int32.
    """

    bias_bits: int = 64
    variant: ClassVar[str] = "int16"


@dataclass(frozen=True, eq=False)
class FullyConnected16Data(base_fc.FullyConnectedData):
    """FULLY_CONNECTED op data on int16 activations (``bias_bits`` as :class:`Conv16Data`)."""

    bias_bits: int = 64
    variant: ClassVar[str] = "int16"


def _bias_bits(op: Operator, bias: Tensor | None, channels: int) -> int:
    if bias is None:
        return 64  # no bias: TFLM accumulates int16 inputs in 64 bits (tests/int16: a bias-less FULLY_CONNECTED)
    dtype = np.dtype(bias.dtype)
    if dtype not in (np.dtype(np.int64), np.dtype(np.int32)):
        raise c.malformed(op, f"bias tensor {bias.index} is {dtype.name}; int64 or int32 is required")
    if c.count(bias.shape) != channels:
        raise c.malformed(op, f"bias tensor {bias.index} has {c.count(bias.shape)} values for {channels} channels")
    if dtype == np.int32 and op.type == "DEPTHWISE_CONV_2D":
        raise c.refuse(op, f"bias tensor {bias.index} is int32; TFLM's int16 DEPTHWISE_CONV_2D reads an int64 bias")
    return 64 if dtype == np.int64 else 32


def _check_wide_shifts(op: Operator, shift: np.ndarray, bits: int) -> None:
    if bits == 64 and shift.size and int(shift.max()) > MAX_WIDE_SHIFT:
        raise c.refuse(op, f"rescale shift {int(shift.max())} is past the 64-bit requantization's {MAX_WIDE_SHIFT}")


def validate_conv(graph: Graph, op: Operator) -> None:
    """The int8 structural checks, with the int16 bias rule."""
    _, (bias,), _ = c.operands(graph, op, 2, 1)
    g = base_conv._parts(graph, _without_bias(op)).geometry
    _bias_bits(op, bias, g["out_ch"])


def validate_fully_connected(graph: Graph, op: Operator) -> None:
    """The int8 structural checks, with the int16 bias rule."""
    _, (bias,), _ = c.operands(graph, op, 2, 1)
    _bias_bits(op, bias, base_fc._parts(graph, _without_bias(op))[-1])


def analyze_conv(graph: Graph, op: Operator) -> Conv16Data:
    """TFLM's Prepare for int16 CONV_2D or DEPTHWISE_CONV_2D."""
    # The int8 structural checks want an int32 bias: the geometry is read without it, the bias here.
    (inp, filt), (bias,), out = c.operands(graph, op, 2, 1)
    parts = base_conv._parts(graph, _without_bias(op))
    g = parts.geometry
    in_scale = c16.symmetric(op, inp, "input")
    out_scale = c16.symmetric(op, out, "output")
    bits = _bias_bits(op, bias, g["out_ch"])
    depthwise = op.type == "DEPTHWISE_CONV_2D"
    scales = c.filter_scales(op, filt, g["out_ch"], axis=3 if depthwise else 0)
    mult, shift = c.multipliers(op, [in_scale * s / out_scale for s in scales])
    _check_wide_shifts(op, shift, bits)
    act_min, act_max = c16.activation_range16(op, out_scale, 0)
    taps = g["filter_h"] * g["filter_w"] * (1 if depthwise else g["filter_in_ch"])
    return Conv16Data(
        op_index=op.index, op_type=op.type, depthwise=depthwise, num_inputs=len(op.inputs),
        has_bias=bias is not None, **g, input_offset=0, output_offset=0, act_min=act_min, act_max=act_max,
        multiplier=mult, shift=shift, macs=g["batches"] * g["out_h"] * g["out_w"] * g["out_ch"] * taps,
        bias_bits=bits)


def analyze_fully_connected(graph: Graph, op: Operator) -> FullyConnected16Data:
    """TFLM's Prepare for int16 FULLY_CONNECTED."""
    (inp, filt), (bias,), out = c.operands(graph, op, 2, 1)
    _, _, _, _, batches, depth, out_ch = base_fc._parts(graph, _without_bias(op))
    in_scale = c16.symmetric(op, inp, "input")
    out_scale = c16.symmetric(op, out, "output")
    bits = _bias_bits(op, bias, out_ch)
    if np.dtype(filt.dtype) != np.int8 or filt.quant is None or filt.quant.scale.size == 0:
        raise c.refuse(op, f"weights tensor {filt.index} must be quantized int8")
    per_channel = filt.quant.scale.size > 1
    if per_channel:
        scales = c.filter_scales(op, filt, out_ch, axis=0, role="weights")
        real = [in_scale * s / out_scale for s in scales]
        filter_offset = 0
    else:
        filter_scale = np.float32(filt.quant.scale[0])
        if bias is not None:
            base_fc._check_bias_scale(op, bias, in_scale, float(filter_scale), out_scale)
        real = [in_scale * float(filter_scale) / out_scale] * out_ch  # the double product: ops/fully_connected.py
        filter_offset = -int(filt.quant.zero_point[0])
    mult, shift = c.multipliers(op, real)
    _check_wide_shifts(op, shift, bits)
    act_min, act_max = c16.activation_range16(op, out_scale, 0)
    return FullyConnected16Data(
        op_index=op.index, op_type=op.type, num_inputs=len(op.inputs), has_bias=bias is not None,
        batches=batches, accum_depth=depth, out_ch=out_ch, input_offset=0, filter_offset=filter_offset,
        output_offset=0, per_channel=per_channel, multiplier=mult, shift=shift, act_min=act_min, act_max=act_max,
        macs=batches * out_ch * depth, bias_bits=bits)


def _without_bias(op: Operator) -> Operator:
    """``op`` without its bias operand: the int8 structural checks require an int32 bias."""
    return Operator(op.index, op.type, tuple(op.inputs[:2]), op.outputs, op.options)
