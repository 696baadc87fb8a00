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


def prepare(graph: Graph, op: Operator, options: dict[str, Any]) -> PreparedCall:
    """A :class:`PreparedCall` running ``op`` on the NPU.

    :raises Refusal: (a NotSupportedError) when the NPU cannot run it.
    """
    from .. import _woofles  # the compiled extension; imported only when compiling a model

    p = plan(graph, op, options)
    params = _woofles.params_for(op.type, p)
    return PreparedCall(name=params.kernel_name, kernel=_woofles.kernel_capsule(params.kernel_name), params=params)
