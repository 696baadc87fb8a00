"""RELU, RELU6, RELU_N1_TO_1 and LEAKY_RELU, int8.

* RELU (TFLM's CalculateReluOpData, ``activations_common.cc``): the input
  minus its zero point is rescaled by ``input_scale / output_scale``, offset
  by the output zero point and clamped to ``[max(-128, output zero point), 127]``.
* RELU6 (TFLM's Relu6Prepare): no rescale at all; the raw input is clamped
  to ``[input zero point, round(6 / input_scale) + input zero point]``.
* RELU_N1_TO_1: TFLM registers no kernel for it, so its semantics are
  LiteRT's (``tensorflow/lite/kernels/activations.cc``: ReluPrepare and
  QuantizedReluX(-1, 1)), which its tests are bit-exact with: RELU's rescale
  by the float32 quotient ``input_scale / output_scale``, clamped to the
  output's quantized -1 and 1 (``roundf(±1.0f / output_scale)`` plus the
  output zero point, within int8).
* LEAKY_RELU (``leaky_relu_common.cc``): non-negative inputs are rescaled by
  ``input_scale / output_scale``, negative ones by ``input_scale * alpha /
  output_scale`` (float32 product, a negative alpha keeps its sign apart).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, OpData, Operand, Signature
from tvmdevice.quantization import round_half_away

__all__ = ["ReluData", "Relu6Data", "LeakyReluData", "SIGNATURE", "LEAKY_RELU_SIGNATURE", "validate", "analyze"]

SIGNATURE = Signature((Operand("input", INT8),), (Operand("output", INT8),))
LEAKY_RELU_SIGNATURE = Signature((Operand("input", INT8),), (Operand("output", INT8),), ("alpha",))


@dataclass(frozen=True)
class ReluData(OpData):
    """RELU op data (TFLM's ReluParams member names)."""

    size: int
    input_offset: int  # the input zero point (subtracted)
    output_offset: int
    output_multiplier: int
    output_shift: int
    act_min: int
    act_max: int


@dataclass(frozen=True)
class Relu6Data(OpData):
    """RELU6 op data: the raw clamp bounds."""

    size: int
    zero: int
    six: int


@dataclass(frozen=True)
class LeakyReluData(OpData):
    """LEAKY_RELU op data (TFLM's LeakyReluParams member names)."""

    size: int
    input_offset: int  # the input zero point (subtracted)
    output_offset: int
    output_multiplier_alpha: int  # sign of alpha kept here; the shift is the magnitude's
    output_shift_alpha: int
    output_multiplier_identity: int
    output_shift_identity: int


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor]:
    (inp,), _, out = c.operands(graph, op, 1)
    if tuple(inp.shape) != tuple(out.shape):
        raise c.malformed(op, f"input shape {list(inp.shape)} and output shape {list(out.shape)} must match")
    if op.type == "LEAKY_RELU":
        try:
            float(op.options.get("alpha", 0.0))
        except (TypeError, ValueError):
            raise c.malformed(op, f"alpha {op.options.get('alpha')!r} is not a number") from None
    return inp, out


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts and equal input and output shapes."""
    _parts(graph, op)


def _quantized(value: float, scale: float) -> int:
    # FloatToQuantizedType's round() of a float32 quotient.
    return round_half_away(float(np.float32(value) / np.float32(scale)))


# LiteRT adds the rounded bound to the zero point in int32 (static_cast<int32>(roundf(...))):
# a bound past this is undefined behaviour there, so nothing to be bit-exact with.
_BOUND_LIMIT = 2**31 - 1 - 128


def _relu_n1_to_1(op: Operator, size: int, s_in: float, z_in: int, s_out: float, z_out: int) -> ReluData:
    one = _quantized(1.0, s_out)
    if one > _BOUND_LIMIT:
        raise c.refuse(op, f"output scale {s_out} puts the quantized 1.0 at {one}, past int32 (LiteRT's "
                           "bound is undefined there)")
    # ReluPrepare divides the two float32 scales in float32, then widens to double.
    multiplier, shift = c.multiplier(op, float(np.float32(s_in) / np.float32(s_out)))
    return ReluData(op_index=op.index, op_type=op.type, size=size, input_offset=z_in, output_offset=z_out,
                    output_multiplier=multiplier, output_shift=shift,
                    act_min=max(-128, z_out + _quantized(-1.0, s_out)), act_max=min(127, z_out + one))


def analyze(graph: Graph, op: Operator) -> OpData:
    """The op data of RELU, RELU6, RELU_N1_TO_1 or LEAKY_RELU."""
    inp, out = _parts(graph, op)
    s_in, z_in = c.per_tensor_int8(op, inp, "input")
    s_out, z_out = c.per_tensor_int8(op, out, "output")
    size = c.count(inp.shape)
    if op.type == "RELU_N1_TO_1":
        return _relu_n1_to_1(op, size, s_in, z_in, s_out, z_out)
    if op.type == "RELU6":
        q6 = _quantized(6.0, s_in)
        if not -(2**31) <= q6 < 2**31:
            # FloatToQuantizedType converts 6 / scale to int32: past its range that is undefined
            # behaviour in TFLM (x86 gives INT_MIN, so every output is -128), nothing to match.
            raise c.refuse(op, f"input scale {s_in:g} puts 6.0 at {q6:.3g} steps, outside int32: TFLM's RELU6 "
                               "bound is undefined behaviour there")
        six = max(-128, min(127, q6 + z_in))
        return Relu6Data(op_index=op.index, op_type=op.type, size=size, zero=z_in, six=six)
    if op.type == "LEAKY_RELU":
        alpha = float(np.float32(op.options.get("alpha", 0.0)))
        if not math.isfinite(alpha):
            raise c.refuse(op, f"alpha {alpha} is not finite")
        # TFLM multiplies input_scale * alpha / output_scale in float32.
        real_alpha = float(np.float32(np.float32(s_in) * np.float32(alpha)) / np.float32(s_out))
        m_alpha, sh_alpha = c.multiplier(op, abs(real_alpha))
        m_id, sh_id = c.multiplier(op, float(np.float32(s_in) / np.float32(s_out)))
        return LeakyReluData(op_index=op.index, op_type=op.type, size=size, input_offset=z_in, output_offset=z_out,
                             output_multiplier_alpha=-m_alpha if real_alpha < 0 else m_alpha,
                             output_shift_alpha=sh_alpha, output_multiplier_identity=m_id,
                             output_shift_identity=sh_id)
    multiplier, shift = c.multiplier(op, s_in / s_out)
    act_min, act_max = max(-128, z_out), 127  # the output's quantized 0 (CalculateReluOpData)
    return ReluData(op_index=op.index, op_type=op.type, size=size, input_offset=z_in, output_offset=z_out,
                    output_multiplier=multiplier, output_shift=shift, act_min=act_min, act_max=act_max)
