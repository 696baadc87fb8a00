"""ADD: validation and parameters for the woofles kernel.

Follows TFLM's int8 ADD Prepare: both inputs are shifted left by 20 bits and
rescaled by ``scale_i / (2 * max_scale)``; the sum is rescaled by
``2 * max_scale / (2**20 * output_scale)`` (QuantizeMultiplierSmallerThanOneExp,
so every factor must lie in (0, 1)).  Broadcasting is lowered to per-input
element strides over a rank-4 output, the NPU's address generator's limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.quantization import quantize_multiplier

from .common import Refusal, activation_range, check_elements, check_fits_sram, int8_per_tensor, operands

__all__ = ["AddPlan", "plan", "LEFT_SHIFT", "MAX_RANK"]

#: TFLM's left shift for int8 ADD.
LEFT_SHIFT = 20
#: Highest rank the address generator walks.
MAX_RANK = 4


@dataclass(frozen=True)
class AddPlan:
    """Everything ``tvmd_woofles_add_params_t`` holds, validated."""

    out_shape: tuple[int, ...]  # 4 entries: the output padded with leading 1s
    in1_strides: tuple[int, ...]  # 4 element strides, 0 where broadcast
    in2_strides: tuple[int, ...]
    in1_size: int
    in2_size: int
    input1_offset: int
    input2_offset: int
    output_offset: int
    left_shift: int
    input1_multiplier: int
    input1_shift: int
    input2_multiplier: int
    input2_shift: int
    output_multiplier: int
    output_shift: int
    act_min: int
    act_max: int


def broadcast_strides(shape: tuple[int, ...], out_shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major element strides of ``shape`` read along ``out_shape`` (0 where broadcast)."""
    padded = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    strides, step = [], 1
    for dim in reversed(padded):
        strides.append(step if dim != 1 else 0)
        step *= dim
    return tuple(reversed(strides))


def _below_one(real: float, what: str) -> tuple[int, int]:
    if not 0.0 < real < 1.0:
        raise Refusal(f"{what} rescale factor {real} is outside (0, 1)")
    return quantize_multiplier(real)


def plan(graph: Graph, op: Operator, options: dict[str, Any]) -> AddPlan:
    """Validate an ADD against the NPU's limits; compute its parameters.

    :raises Refusal: with the reason, for anything the NPU cannot run.
    """
    (in1, in2), _, out = operands(graph, op, 2)
    try:
        shape = tuple(int(d) for d in np.broadcast_shapes(tuple(in1.shape), tuple(in2.shape)))
    except ValueError:
        raise Refusal(f"input shapes {list(in1.shape)} and {list(in2.shape)} do not broadcast") from None
    if tuple(out.shape) != shape:
        raise Refusal(f"output shape {list(out.shape)} is not the broadcast shape {list(shape)}")
    if len(shape) > MAX_RANK:
        raise Refusal(f"rank {len(shape)} exceeds the address generator's {MAX_RANK} dimensions")
    for t, role in ((in1, "input1"), (in2, "input2"), (out, "output")):
        check_elements(t, role)
    out4 = (1,) * (MAX_RANK - len(shape)) + shape
    s1, z1 = int8_per_tensor(in1, "input1")
    s2, z2 = int8_per_tensor(in2, "input2")
    so, zo = int8_per_tensor(out, "output")
    twice_max = 2.0 * max(s1, s2)
    m1, sh1 = _below_one(s1 / twice_max, "input1")
    m2, sh2 = _below_one(s2 / twice_max, "input2")
    mo, sho = _below_one(twice_max / ((1 << LEFT_SHIFT) * so), "output")
    act_min, act_max = activation_range(op.options.get("fused_activation", "NONE"), so, zo)
    check_fits_sram([in1, in2, out], options)
    return AddPlan(
        out_shape=out4, in1_strides=broadcast_strides(tuple(in1.shape), out4),
        in2_strides=broadcast_strides(tuple(in2.shape), out4),
        in1_size=int(np.prod(in1.shape, dtype=np.int64)), in2_size=int(np.prod(in2.shape, dtype=np.int64)),
        input1_offset=-z1, input2_offset=-z2, output_offset=zo, left_shift=LEFT_SHIFT,
        input1_multiplier=m1, input1_shift=sh1, input2_multiplier=m2, input2_shift=sh2,
        output_multiplier=mo, output_shift=sho, act_min=act_min, act_max=act_max,
    )
