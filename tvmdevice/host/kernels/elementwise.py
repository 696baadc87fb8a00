"""ADD and MUL, int8, with broadcasting.

Bit-exact with TFLM's reference_integer_ops AddFunc / MulElementwise.  Both
are element-wise, so numpy broadcasting yields the same values as TFLM's
BroadcastAdd6DSlow / BroadcastMul4DSlow loops; the rank limits of those loops
are enforced at prepare time.

ADD (CalculateOpDataAdd): inputs are shifted left by 20 bits, scaled by
``scale_i / (2 * max_scale)`` and summed; the sum is scaled by
``2 * max_scale / (2**20 * output_scale)``.  MUL: the product of the offset
inputs is scaled by ``s1 * s2 / s_out``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.host.kernels import _common as c
from tvmdevice.kernel import PreparedCall
from tvmdevice.quantization import quantize_multiplier

__all__ = ["prepare", "AddParams", "MulParams"]

_ADD_LEFT_SHIFT = 20  # int8 (15 is for int16)
_MAX_BROADCAST_RANK = {"ADD": 6, "MUL": 4}


@dataclass(frozen=True)
class AddParams:
    """Prepared ADD parameters (shifts are TFLM's: <= 0, i.e. right shifts)."""

    input1_offset: int
    input2_offset: int
    output_offset: int
    input1_multiplier: int
    input1_shift: int
    input2_multiplier: int
    input2_shift: int
    output_multiplier: int
    output_shift: int
    act_min: int
    act_max: int


@dataclass(frozen=True)
class MulParams:
    """Prepared MUL parameters."""

    input1_offset: int
    input2_offset: int
    output_offset: int
    output_multiplier: int
    output_shift: int
    act_min: int
    act_max: int


def _smaller_than_one(op: Operator, real: float, what: str) -> tuple[int, int]:
    # QuantizeMultiplierSmallerThanOneExp: TFLM aborts outside (0, 1).
    if not 0.0 < real < 1.0:
        raise c.unsupported(op, f"{what} rescale factor {real} must be in (0, 1) for TFLM's int8 ADD")
    return quantize_multiplier(real)


def prepare(graph: Graph, op: Operator) -> PreparedCall:
    """Validate an ADD or MUL operator and compute its parameters."""
    (in1, in2), _, out = c.operands(graph, op, 2)
    try:
        shape = np.broadcast_shapes(tuple(in1.shape), tuple(in2.shape))
    except ValueError:
        raise c.malformed(op, f"input shapes {list(in1.shape)} and {list(in2.shape)} do not broadcast") from None
    c.check_shape(op, out, shape, "output")
    if tuple(in1.shape) != tuple(in2.shape) and len(shape) > _MAX_BROADCAST_RANK[op.type]:
        raise c.unsupported(op, f"broadcasting is limited to {_MAX_BROADCAST_RANK[op.type]} dimensions")
    s1, z1 = c.per_tensor(op, in1, "input1")
    s2, z2 = c.per_tensor(op, in2, "input2")
    so, zo = c.per_tensor(op, out, "output")
    act_min, act_max = c.activation_range(op, op.options.get("fused_activation", "NONE"), so, zo)
    if op.type == "ADD":
        twice_max = 2.0 * max(s1, s2)
        m1, sh1 = _smaller_than_one(op, s1 / twice_max, "input1")
        m2, sh2 = _smaller_than_one(op, s2 / twice_max, "input2")
        mo, sho = _smaller_than_one(op, twice_max / ((1 << _ADD_LEFT_SHIFT) * so), "output")
        params: Any = AddParams(-z1, -z2, zo, m1, sh1, m2, sh2, mo, sho, act_min, act_max)
        return PreparedCall(name="add_s8", kernel=run_add, params=params)
    mo, sho = quantize_multiplier(s1 * s2 / so)
    params = MulParams(-z1, -z2, zo, mo, sho, act_min, act_max)
    return PreparedCall(name="mul_s8", kernel=run_mul, params=params)


def run_add(params: AddParams, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input1, input2, output]."""
    p = params
    a = (buffers[0].astype(np.int64) + p.input1_offset) << _ADD_LEFT_SHIFT
    b = (buffers[1].astype(np.int64) + p.input2_offset) << _ADD_LEFT_SHIFT
    scaled_a = c.requantize(a, p.input1_multiplier, p.input1_shift)
    scaled_b = c.requantize(b, p.input2_multiplier, p.input2_shift)
    y = c.requantize(scaled_a + scaled_b, p.output_multiplier, p.output_shift) + p.output_offset
    buffers[2][...] = c.clamp_to_int8(y, p.act_min, p.act_max)


def run_mul(params: MulParams, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input1, input2, output]."""
    p = params
    prod = (buffers[0].astype(np.int64) + p.input1_offset) * (buffers[1].astype(np.int64) + p.input2_offset)
    y = c.requantize(prod, p.output_multiplier, p.output_shift) + p.output_offset
    buffers[2][...] = c.clamp_to_int8(y, p.act_min, p.act_max)
