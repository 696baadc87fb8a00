"""Operator planning for the woofles NPU: what it accepts, and the parameters it runs with.

Each operator family has a pure-Python ``plan(graph, op, options)`` that
validates the operator against the NPU's declared limits and computes every
field of its C parameter struct, raising :class:`~.common.Refusal` with a
reason otherwise.  :func:`check` (placement) and :func:`prepare` (compile
time) share those planners, so an accepted operator always prepares.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.kernel import PreparedCall
from tvmdevice.layout import Layout
from tvmdevice.params import ParamsStruct

from ..params import ADD_PARAMS, CONV_PARAMS, FC_PARAMS, POOL_PARAMS
from . import add, conv, fully_connected, pooling
from .common import Refusal

__all__ = ["check", "plan", "prepare", "Refusal", "PLANNERS"]

#: Operator type -> planner.
PLANNERS: dict[str, Callable[[Graph, Operator, dict[str, Any]], Any]] = {
    "CONV_2D": conv.plan,
    "DEPTHWISE_CONV_2D": conv.plan,
    "FULLY_CONNECTED": fully_connected.plan,
    "AVERAGE_POOL_2D": pooling.plan,
    "MAX_POOL_2D": pooling.plan,
    "ADD": add.plan,
}


def plan(graph: Graph, op: Operator, options: dict[str, Any]) -> Any:
    """The validated plan for ``op``.

    :raises Refusal: the NPU cannot run it (the message says why).
    """
    planner = PLANNERS.get(op.type)
    if planner is None:
        supported = ", ".join(sorted(PLANNERS))
        raise Refusal(f"the woofles NPU has no {op.type} unit (it runs {supported})")
    return planner(graph, op, options)


def check(graph: Graph, op: Operator, options: dict[str, Any]) -> str | None:
    """``None`` when the NPU accepts ``op``, else the reason it refuses."""
    try:
        plan(graph, op, options)
    except Refusal as exc:
        return str(exc)
    return None


def _kernel(op_type: str, plan: Any) -> tuple[str, Layout]:
    """The C kernel (by name) that runs a plan of ``op_type``, and its params struct."""
    if op_type in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        return ("tvmd_woofles_depthwise_conv2d_s8" if plan.depthwise else "tvmd_woofles_conv2d_s8"), CONV_PARAMS
    if op_type == "FULLY_CONNECTED":
        return "tvmd_woofles_fully_connected_s8", FC_PARAMS
    if op_type in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        return ("tvmd_woofles_avg_pool2d_s8" if plan.average else "tvmd_woofles_max_pool2d_s8"), POOL_PARAMS
    return "tvmd_woofles_add_s8", ADD_PARAMS


def prepare(graph: Graph, op: Operator, options: dict[str, Any]) -> PreparedCall:
    """A :class:`PreparedCall` running ``op`` on the NPU.

    :raises Refusal: (a NotSupportedError) when the NPU cannot run it.
    """
    from .. import _woofles  # the compiled extension; imported only when compiling a model

    p = plan(graph, op, options)
    name, layout = _kernel(op.type, p)
    return PreparedCall(name=name, kernel=_woofles.kernel_capsule(name), params=ParamsStruct(layout, p))
