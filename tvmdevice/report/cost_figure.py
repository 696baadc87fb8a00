"""Per-operator cost as bars: one bar per record of a timings file, coloured by device.

Bars run top to bottom in the file's order, each labelled ``#index TYPE``
(a partition's call: its operators) with its value and share; the title gives the total.  Each bar is the SVG group
``cost-<k>`` (``k`` the record's position) with the record as ``data-*``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..partition import PARTITION_TYPE
from .colours import NO_KERNEL, device_colours
from .svg_marks import Mark
from .timings import OperatorCost

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule

__all__ = ["draw_costs", "costs_height"]

_ROW_INCHES = 0.26


def costs_height(costs: list[OperatorCost]) -> float:
    """Inches the bars need."""
    return _ROW_INCHES * len(costs) + 1.3


def _label(module: "CompiledModule", c: OperatorCost) -> str:
    if c.op_index is None:
        return c.op_type
    part = module.placement.ops[c.op_index].partition
    if c.op_type == PARTITION_TYPE and part is not None:
        return f"partition {part.index} (#{min(part.op_indices)}-#{max(part.op_indices)})"
    return f"#{c.op_index} {c.op_type}"


def _value(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 or float(v).is_integer() else f"{v:,.3g}"


def draw_costs(fig: Any, module: "CompiledModule", costs: list[OperatorCost]) -> dict[str, Mark]:
    """Draw ``costs`` as bars into ``fig`` (a Figure or SubFigure); the marks of its bars."""
    from matplotlib.patches import Patch

    colours = device_colours(module.target)
    unit = costs[0].unit
    total = sum(c.value for c in costs)
    ax = fig.subplots(1, 1)
    fig.suptitle(f"per-operator cost of {module.graph.name}: {_value(total)} {unit} in all", fontsize=11)
    marks: dict[str, Mark] = {}
    ys = [-k for k in range(len(costs))]
    bars = ax.barh(ys, [c.value for c in costs], height=0.7,
                   color=[colours.get(c.device, NO_KERNEL) for c in costs], edgecolor="#333333", linewidth=0.5)
    for k, (bar, c) in enumerate(zip(bars, costs)):
        gid = f"cost-{k}"
        bar.set_gid(gid)
        share = c.value / total if total else 0.0
        marks[gid] = Mark({"op-index": c.op_index if c.op_index is not None else "", "op-type": c.op_type,
                           "device": c.device, "value": c.value, "unit": unit},
                          f"{_label(module, c)} on {c.device}: {_value(c.value)} {unit} ({share:.1%})")
        ax.text(c.value, -k, f" {_value(c.value)} ({share:.0%})", va="center", fontsize=7)
    ax.set_yticks(ys, [_label(module, c) for c in costs], fontsize=7)
    ax.set_xlabel(unit)
    ax.set_xlim(0, max((c.value for c in costs), default=1) * 1.25 or 1)
    ax.set_ylim(-len(costs) + 0.4, 0.6)
    used = list(dict.fromkeys(c.device for c in costs))
    ax.legend(handles=[Patch(facecolor=colours.get(d, NO_KERNEL), label=d) for d in used], loc="lower right",
              fontsize=8)
    return marks
