"""MEAN, SUM and REDUCE_MAX: the input shape and the reduced axes at the C loop's rank.

The op data (:class:`tvmdevice.ops.MeanData`, :class:`~tvmdevice.ops.reduce.ReduceMaxData`)
holds the input shape and the axes; the C loop walks ``TVMD_C_MEAN_DIMS``
dimensions, a flag per dimension saying whether it is reduced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..kernel_table import MEAN_DIMS
from ._common import KernelPlan, right_aligned

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator
    from tvmdevice.ops import MeanData
    from tvmdevice.ops.reduce import ReduceMaxData

__all__ = ["reduced_axes"]


def reduced_axes(graph: "Graph", op: "Operator", d: "MeanData | ReduceMaxData") -> KernelPlan:
    """``shape`` right-aligned to ``TVMD_C_MEAN_DIMS`` (1 before) and ``reduced``, 1 per reduced dimension."""
    lead = MEAN_DIMS - len(d.in_shape)
    return KernelPlan({"shape": right_aligned(d.in_shape, MEAN_DIMS, 1),
                       "reduced": tuple(int(k - lead in d.axes) for k in range(MEAN_DIMS))})
