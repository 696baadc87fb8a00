"""ADD and MUL with broadcasting: the params struct and the loop's shape.

Offsets, multipliers, shifts, the activation range and the broadcast strides
are the core's :class:`tvmdevice.ops.elementwise.ElementwiseData` (TFLM's
CalculateOpDataAdd / CalculateOpDataMul).  cmsis-nn's own choice: equal
shapes and scalar operands run as one flat loop; other shapes walk up to
``MAX_DIMS`` dimensions with per-input strides, 0 along broadcast dimensions.
"""

from __future__ import annotations

import numpy as np

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.layout import Field, Layout
from tvmdevice.ops import ElementwiseData

from . import _common as c

__all__ = ["PARAMS", "prepare"]

PARAMS = Layout("tvmd_cmsis_elementwise_params_t", (
    Field("kind", "uint32_t", doc="TVMD_CMSIS_KIND_ADD or TVMD_CMSIS_KIND_MUL"),
    Field("ndim", "int32_t", doc="dimensions the loop walks (<= TVMD_CMSIS_MAX_DIMS)"),
    Field("size", "int32_t", doc="output elements"),
    Field("out_shape", "int32_t", (c.MAX_DIMS,), doc="output shape, 1 past ndim"),
    Field("in1_strides", "int32_t", (c.MAX_DIMS,), doc="element strides, 0 along a broadcast dimension"),
    Field("in2_strides", "int32_t", (c.MAX_DIMS,)),
    *c.int32_fields("input1_offset", "input2_offset", "output_offset"),
    Field("left_shift", "int32_t", doc="ADD: 20 for int8"),
    *c.int32_fields("input1_multiplier", "input1_shift", "input2_multiplier", "input2_shift", "output_multiplier",
                    "output_shift", "act_min", "act_max"),
), doc="ADD and MUL with broadcasting; shapes right-aligned to ndim dimensions.")


def _elements(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def prepare(graph: Graph, op: Operator, data: ElementwiseData) -> c.KernelPlan:
    n1, n2 = _elements(data.in1_shape), _elements(data.in2_shape)
    if data.in1_shape == data.in2_shape or (n1 in (1, data.size) and n2 in (1, data.size)):
        # Same layout or a scalar operand: one flat loop.
        shape, s1, s2 = (data.size,), (int(n1 == data.size),), (int(n2 == data.size),)
    else:
        shape, s1, s2 = data.broadcast_strides(c.MAX_DIMS)  # refuses a higher rank
    pad = c.MAX_DIMS - len(shape)
    return c.KernelPlan({"ndim": len(shape), "out_shape": (*shape, *(1,) * pad), "in1_strides": (*s1, *(0,) * pad),
                         "in2_strides": (*s2, *(0,) * pad)})
