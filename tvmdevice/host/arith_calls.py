"""The host device's calls for the arithmetic and activation operators of issue 12.

Each plan picks the C kernel of :data:`~tvmdevice.host.kernel_table.KERNELS`
and the members the C loops need in their own form (broadcast strides and
shapes right-aligned to a fixed rank); :mod:`tvmdevice.host.calls` merges
:data:`PLANS` into its table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from tvmdevice.host.kernel_table import MAX_DIMS, MEAN_DIMS
from tvmdevice.ops._broadcast import BroadcastData
from tvmdevice.ops.mean import MeanData
from tvmdevice.ops.reduce import ReduceMaxData

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator

__all__ = ["PLANS"]

_Plan = tuple[str, dict[str, Any]]
_DIMS = MAX_DIMS
_REDUCE_DIMS = MEAN_DIMS


def _broadcast(kernel: str) -> Callable[..., _Plan]:
    def plan(graph: "Graph", op: "Operator", d: BroadcastData) -> _Plan:
        shape, s1, s2 = d.broadcast_strides(_DIMS)
        return kernel, {"out_shape": shape, "in1_strides": s1, "in2_strides": s2}
    return plan


def _plain(kernel: str) -> Callable[..., _Plan]:
    def plan(graph: "Graph", op: "Operator", d: Any) -> _Plan:
        return kernel, {}
    return plan


def _reduced(shape: tuple[int, ...], axes: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
    lead = _REDUCE_DIMS - len(shape)
    return {"shape": (1,) * lead + tuple(shape), "reduced": tuple(int(k - lead in axes) for k in range(_REDUCE_DIMS))}


def _sum(graph: "Graph", op: "Operator", d: MeanData) -> _Plan:
    return "sum_s8", _reduced(d.in_shape, d.axes)


def _reduce_max(graph: "Graph", op: "Operator", d: ReduceMaxData) -> _Plan:
    return "reduce_max_s8", _reduced(d.in_shape, d.axes)


#: Operator type -> plan(graph, op, op data) -> (kernel name, extra members).
PLANS: dict[str, Callable[..., _Plan]] = {
    "MAXIMUM": _broadcast("maximum_s8"), "MINIMUM": _broadcast("minimum_s8"),
    "SQUARED_DIFFERENCE": _broadcast("squared_difference_s8"), "PRELU": _broadcast("prelu_s8"),
    "RELU": _plain("relu_s8"), "RELU6": _plain("relu6_s8"), "RELU_N1_TO_1": _plain("relu_s8"),
    "LEAKY_RELU": _plain("leaky_relu_s8"), "HARD_SWISH": _plain("hard_swish_s8"),
    "SUM": _sum, "REDUCE_MAX": _reduce_max,
    "ARG_MAX": _plain("arg_max_s8"), "ARG_MIN": _plain("arg_min_s8"),
    "TRANSPOSE_CONV": _plain("transpose_conv_s8"), "BATCH_MATMUL": _plain("batch_matmul_s8"),
    "LOG_SOFTMAX": _plain("log_softmax_s8"),
}
