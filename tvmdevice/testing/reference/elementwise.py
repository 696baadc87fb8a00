"""ADD and MUL, int8, with broadcasting.

Bit-exact with TFLM's reference_integer_ops AddFunc / MulElementwise, run on
:class:`tvmdevice.ops.ElementwiseData`.  Both are element-wise, so numpy
broadcasting yields the same values as TFLM's broadcast loops (whose rank
limits the op data enforces).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvmdevice.kernel import PreparedCall
from tvmdevice.ops import ElementwiseData
from tvmdevice.testing.reference import _common as c

__all__ = ["build", "run_add", "run_mul"]


def build(data: ElementwiseData) -> PreparedCall:
    """The host call for ADD / MUL op data."""
    if data.op_type == "ADD":
        return PreparedCall(name="add_s8", kernel=run_add, params=data)
    return PreparedCall(name="mul_s8", kernel=run_mul, params=data)


def run_add(params: ElementwiseData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input1, input2, output]."""
    p = params
    a = (buffers[0].astype(np.int64) + p.input1_offset) << p.left_shift
    b = (buffers[1].astype(np.int64) + p.input2_offset) << p.left_shift
    scaled_a = c.requantize(a, p.input1_multiplier, p.input1_shift)
    scaled_b = c.requantize(b, p.input2_multiplier, p.input2_shift)
    y = c.requantize(scaled_a + scaled_b, p.output_multiplier, p.output_shift) + p.output_offset
    buffers[2][...] = c.clamp_to_int8(y, p.act_min, p.act_max)


def run_mul(params: ElementwiseData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input1, input2, output]."""
    p = params
    prod = (buffers[0].astype(np.int64) + p.input1_offset) * (buffers[1].astype(np.int64) + p.input2_offset)
    y = c.requantize(prod, p.output_multiplier, p.output_shift) + p.output_offset
    buffers[2][...] = c.clamp_to_int8(y, p.act_min, p.act_max)
