"""The host device's prepare step for the int16x8 variants and SUB.

Keyed by kernel key (:func:`tvmdevice.ops.kernel_key`); each plan names the
C kernel of :mod:`tvmdevice.host.kernel_table_int16` and the members the op
data does not hold, like the int8 plans of :mod:`tvmdevice.host.calls` (whose
helpers the shared shapes reuse).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from tvmdevice import ops
from tvmdevice.host.kernel_table import INT16_KERNELS

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator

__all__ = ["PLANS"]

_Plan = tuple[str, dict[str, Any]]
_SUFFIX = {"": "s8", "int16": "s16"}


def _elementwise(graph: "Graph", op: "Operator", d: ops.ElementwiseData) -> _Plan:
    from tvmdevice.host import calls  # the broadcast layout of the int8 ADD/MUL

    _, extras = calls._elementwise(graph, op, d)
    return f"{op.type.lower()}_{_SUFFIX[d.variant]}", extras


def _conv(graph: "Graph", op: "Operator", d: ops.ConvData) -> _Plan:
    from tvmdevice.host.limits import check_window_coordinates

    check_window_coordinates(d)
    return ("depthwise_conv2d_s16" if d.depthwise else "conv2d_s16"), {}


def _fully_connected(graph: "Graph", op: "Operator", d: ops.FullyConnectedData) -> _Plan:
    from tvmdevice.host import calls

    _, extras = calls._fully_connected(graph, op, d)
    return "fully_connected_s16", extras


def _pool(graph: "Graph", op: "Operator", d: ops.PoolData) -> _Plan:
    from tvmdevice.host.limits import check_pool_windows, check_window_coordinates

    check_window_coordinates(d)
    check_pool_windows(d)
    return ("avg_pool2d_s16" if d.average else "max_pool2d_s16"), {}


def _fixed(name: str) -> Callable[..., _Plan]:
    def plan(graph: "Graph", op: "Operator", d: ops.OpData) -> _Plan:
        return name, {}

    return plan


_SPECIAL: dict[str, Callable[..., _Plan]] = {
    "SUB": _elementwise, "ADD:int16": _elementwise, "SUB:int16": _elementwise, "MUL:int16": _elementwise,
    "CONV_2D:int16": _conv, "DEPTHWISE_CONV_2D:int16": _conv, "FULLY_CONNECTED:int16": _fully_connected,
    "AVERAGE_POOL_2D:int16": _pool, "MAX_POOL_2D:int16": _pool,
}

#: Kernel key -> plan: the ones above, and for every other key the one kernel that runs it.
PLANS: dict[str, Callable[..., _Plan]] = {
    **{key: _fixed(k.name) for k in INT16_KERNELS for key in k.op_types}, **_SPECIAL}
