"""AVERAGE_POOL_2D and MAX_POOL_2D: cmsis-nn's coordinate bound.

Everything the kernels need is the core's :class:`tvmdevice.ops.pooling.PoolData`
(TFLM's int8 pooling does not rescale: the operator layer enforces TFLM's
rule on input and output quantization); cmsis-nn adds only its int32
coordinate bound.
"""

from __future__ import annotations

from tvmdevice.errors import Refusal
from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import PoolData

from . import _common as c

__all__ = ["prepare"]

def prepare(graph: Graph, op: Operator, data: PoolData) -> c.KernelPlan:
    """Nothing to pack; with TFLM's padding every window overlaps the image, so the
    empty window TFLM's AveragePool fails on cannot occur (the C kernel still
    returns an error if it did)."""
    c.check_extent(data.in_h, data.out_h, data.stride_h, data.filter_h)
    c.check_extent(data.in_w, data.out_w, data.stride_w, data.filter_w)
    if data.average and data.variant == "int16" and data.filter_h * data.filter_w * 32768 > c.INT32_MAX:
        # The int16 average sums a window of up to 2^15-sized values in int32, as TFLM does.
        raise Refusal(f"a {data.filter_h}x{data.filter_w} int16 window's sum could overflow the int32 accumulator")
    return c.KernelPlan()
