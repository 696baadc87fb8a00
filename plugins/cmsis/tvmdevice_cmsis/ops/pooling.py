"""AVERAGE_POOL_2D and MAX_POOL_2D: the params struct.

Everything the kernels need is the core's :class:`tvmdevice.ops.pooling.PoolData`
(TFLM's int8 pooling does not rescale: the operator layer enforces TFLM's
rule on input and output quantization); cmsis-nn adds only its int32
coordinate bound.
"""

from __future__ import annotations

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.layout import Field, Layout
from tvmdevice.ops import PoolData

from . import _common as c

__all__ = ["PARAMS", "prepare"]

PARAMS = Layout("tvmd_cmsis_pool_params_t", (
    Field("kind", "uint32_t", doc="TVMD_CMSIS_KIND_AVG_POOL or TVMD_CMSIS_KIND_MAX_POOL"),
    *c.int32_fields("batches", "in_h", "in_w", "channels", "out_h", "out_w", "filter_h", "filter_w", "stride_h",
                    "stride_w", "pad_h", "pad_w", "act_min", "act_max"),
), doc="AVERAGE_POOL_2D and MAX_POOL_2D (kind tells which).")


def prepare(graph: Graph, op: Operator, data: PoolData) -> c.KernelPlan:
    """Nothing to pack; with TFLM's padding every window overlaps the image, so the
    empty window TFLM's AveragePool fails on cannot occur (the C kernel still
    returns an error if it did)."""
    c.check_extent(data.in_h, data.out_h, data.stride_h, data.filter_h)
    c.check_extent(data.in_w, data.out_w, data.stride_w, data.filter_w)
    return c.KernelPlan()
