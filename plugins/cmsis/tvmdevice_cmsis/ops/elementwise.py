"""ADD, SUB and MUL with broadcasting: the shape of cmsis-nn's loop.

Offsets, multipliers, shifts, the activation range and the broadcast strides
are the core's :class:`tvmdevice.ops.elementwise.ElementwiseData` (TFLM's
CalculateOpDataAdd / CalculateOpDataMul).  cmsis-nn's own choice: equal
shapes and scalar operands run as one flat loop; other shapes walk up to
``MAX_DIMS`` dimensions with per-input strides, 0 along broadcast dimensions.
"""

from __future__ import annotations

import numpy as np
from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import ElementwiseData

from ..kernel_table import MAX_DIMS
from . import _common as c

__all__ = ["prepare"]

def _elements(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def prepare(graph: Graph, op: Operator, data: ElementwiseData) -> c.KernelPlan:
    """The loop's shape and strides, padded to ``MAX_DIMS`` entries."""
    n1, n2 = _elements(data.in1_shape), _elements(data.in2_shape)
    if data.in1_shape == data.in2_shape or (n1 in (1, data.size) and n2 in (1, data.size)):
        # Same layout or a scalar operand: one flat loop.
        shape, s1, s2 = (data.size,), (int(n1 == data.size),), (int(n2 == data.size),)
    else:
        shape, s1, s2 = data.broadcast_strides(MAX_DIMS)  # refuses a higher rank
    pad = MAX_DIMS - len(shape)
    return c.KernelPlan({"ndim": len(shape), "out_shape": (*shape, *(1,) * pad), "in1_strides": (*s1, *(0,) * pad),
                         "in2_strides": (*s2, *(0,) * pad)})
