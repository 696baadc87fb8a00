"""The placement: the operator graph, operators in order top to bottom, coloured by device.

Each operator is a square node (SVG group ``op-<index>``, ``data-device``)
filled with its device's colour (:mod:`.colours`; grey for a view or a
folded PAD), labelled with its type and device, and the devices that declined
it (the full reasons in its tooltip).  Each tensor one operator writes and a
later one reads is an arrow between them (``edge-<tensor>-<from>-<to>``):
straight to the next operator, an arc on the left around the ones between.
A partition (a run of operators one device executes as one call) is framed
(``partition-<index>``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..ir import ABSENT
from .colours import NO_KERNEL, device_colours, operator_colour
from .svg_marks import Mark

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule
    from ..aot.placement import OpPlacement

__all__ = ["draw_placement", "placement_height"]

_ROW_INCHES = 0.34
_NODE = 0.32  # half the side of a node, in rows
_TEXT_X = 0.6
_REASON_CHARS = 90


def placement_height(module: "CompiledModule") -> float:
    """Inches the graph needs."""
    return _ROW_INCHES * len(module.graph.operators) + 1.4


def _where(p: "OpPlacement") -> str:
    if p.is_folded and p.fold is not None:
        return f"folded into #{p.fold.conv}"
    if p.is_alias:
        return "view (no kernel)"
    return p.device


def _tooltip(p: "OpPlacement") -> str:
    lines = [f"#{p.op_index} {p.op_type} on {_where(p)}"]
    if p.call is not None:
        lines.append(f"kernel {p.call.name}" + (f", scratch {p.call.scratch_bytes:,} B" if p.call.scratch_bytes
                                                else ""))
    if p.partition is not None:
        lines.append(p.partition.describe())
    lines += [f"declined by {d}: {r}" for d, r in p.declined]
    return "\n".join(lines)


def _declined_line(p: "OpPlacement") -> str:
    text = "declined by " + "; ".join(f"{d}: {r}" for d, r in p.declined)
    return text if len(text) <= _REASON_CHARS else text[:_REASON_CHARS - 1] + "…"


def _edges(module: "CompiledModule") -> list[tuple[int, int, int]]:
    """``(tensor, producer, consumer)`` for each tensor an operator writes and a later one reads."""
    graph = module.graph
    producer = {t: op.index for op in graph.operators for t in op.outputs}
    edges = []
    for op in graph.operators:
        for t in dict.fromkeys(op.inputs):
            if t != ABSENT and t in producer:
                edges.append((t, producer[t], op.index))
    return edges


def draw_placement(fig: Any, module: "CompiledModule") -> dict[str, Mark]:
    """Draw ``module``'s operator graph into ``fig`` (a Figure or SubFigure); the marks of its nodes and frames."""
    from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

    marks: dict[str, Mark] = {}
    colours = device_colours(module.target)
    placement = module.placement
    n = len(placement.ops)
    ax = fig.subplots(1, 1)
    fig.suptitle(f"placement of {module.graph.name} on {module.target}", fontsize=11)
    for p in placement.ops:
        y = -p.op_index
        node = Rectangle((-_NODE, y - _NODE), 2 * _NODE, 2 * _NODE, facecolor=operator_colour(colours, p),
                         edgecolor="#333333", linewidth=0.8)
        gid = f"op-{p.op_index}"
        node.set_gid(gid)
        ax.add_patch(node)
        device = "" if p.is_alias or p.is_folded else p.device
        marks[gid] = Mark({"op-index": p.op_index, "op-type": p.op_type, "device": device,
                           "declined": len(p.declined)}, _tooltip(p))
        ax.text(_TEXT_X, y + (0.12 if p.declined else 0), f"#{p.op_index} {p.op_type} → {_where(p)}",
                va="center", fontsize=8)
        if p.declined:
            ax.text(_TEXT_X, y - 0.22, _declined_line(p), va="center", fontsize=6, color="#555555")
    for tensor, src, dst in _edges(module):
        if dst == src + 1:
            arrow = FancyArrowPatch((0, -src - _NODE), (0, -dst + _NODE), arrowstyle="-|>", mutation_scale=8,
                                    color="#444444", linewidth=0.8, shrinkA=0, shrinkB=0)
        else:
            arrow = FancyArrowPatch((-_NODE, -src), (-_NODE, -dst), arrowstyle="-|>", mutation_scale=8,
                                    color="#777777", linewidth=0.8,
                                    connectionstyle=f"arc3,rad={min(0.15 + 0.02 * (dst - src), 0.6)}")
        gid = f"edge-{tensor}-{src}-{dst}"
        arrow.set_gid(gid)
        ax.add_patch(arrow)
        marks[gid] = Mark({"tensor": tensor, "from": src, "to": dst}, f"tensor #{tensor}: #{src} -> #{dst}")
    for part in placement.partitions:
        first, last = min(part.op_indices), max(part.op_indices)
        frame = Rectangle((-0.55, -last - 0.48), 9.0, last - first + 0.96, fill=False, linestyle="--",
                          edgecolor=colours.get(placement.ops[part.first].device, NO_KERNEL), linewidth=1.2)
        gid = f"partition-{part.index}"
        frame.set_gid(gid)
        ax.add_patch(frame)
        marks[gid] = Mark({"device": placement.ops[part.first].device, "first": first, "last": last},
                          f"partition {part.index}: {part.describe()}")
        ax.text(8.4, -first, f"partition {part.index} (one call)", fontsize=7, ha="right", va="top")
    used = list(dict.fromkeys(p.device for p in placement.ops if not (p.is_alias or p.is_folded)))
    handles = [Patch(facecolor=colours[d], edgecolor="#333333", label=d) for d in colours if d in used]
    if any(p.is_alias or p.is_folded for p in placement.ops):
        handles.append(Patch(facecolor=NO_KERNEL, edgecolor="#333333", label="no kernel (view, folded PAD)"))
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=min(len(handles), 4), fontsize=8,
              frameon=False)
    ax.set_xlim(-2.2, 9.0)
    ax.set_ylim(-n + 0.4, 1.0)
    ax.set_aspect("auto")
    ax.axis("off")
    return marks
