"""The memory plan, one panel per pool: every buffer a box, operator lifetime across, offset up.

A buffer alive from operator ``first_op`` to ``last_op`` at ``offset`` of
``size`` bytes is the box ``[first_op - 0.45, last_op + 0.45] x [offset,
offset + size]``; scratch boxes are hatched.  The plan's peak (the pool's
size) is a line, and in the host pool TFLM's arena for the same model is a
second one beside it (and a fainter one at its head: the part holding the
tensors and scratch TFLM plans, comparable with the pool).  Each box is the SVG group ``buffer-<pool>-<kind>-<n>``
(``n`` the tensor, or the operator for scratch) with the allocation as
``data-*`` attributes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..aot.schedule import HOST
from .svg_marks import Mark
from .tflm_arena import TFLMArena

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule
    from ..aot.memory_plan import Allocation

__all__ = ["draw_memory", "memory_height", "buffer_id", "HALF_WIDTH"]

#: Half the width of a box around its operators (operators are 1 apart).
HALF_WIDTH = 0.45
_TENSOR, _SCRATCH, _PEAK, _TFLM = "#4c72b0", "#dd8452", "#222222", "#c44e52"
_PANEL_INCHES = 3.0


def buffer_id(a: "Allocation") -> str:
    """The SVG id of ``a``'s box."""
    index = a.tensor if a.kind == "tensor" else a.operator
    return f"buffer-{a.pool}-{a.kind}-{index}"


def memory_height(module: "CompiledModule") -> float:
    """Inches the memory panels need."""
    return _PANEL_INCHES * len(module.plan.pools) + 0.6


def _label(module: "CompiledModule", a: "Allocation") -> str:
    span = f"operators #{a.first_op}..#{a.last_op}" if a.first_op != a.last_op else f"operator #{a.first_op}"
    where = f"{a.pool} offset {a.offset:,}" + (f" (block {a.block})" if a.block is not None else "")
    if a.kind == "scratch":
        op = module.graph.operators[a.operator] if a.operator is not None else None
        what = f"scratch of #{a.operator} {op.type if op else ''}".rstrip()
    else:
        t = module.graph.tensors[a.tensor] if a.tensor is not None else None
        what = f"tensor #{a.tensor} {t.name!r} {tuple(t.shape)}" if t is not None else f"tensor #{a.tensor}"
    return f"{what}: {a.size:,} B at {where}, alive {span}"


def draw_memory(fig: Any, module: "CompiledModule", arena: TFLMArena | None) -> dict[str, Mark]:
    """Draw one panel per pool of ``module``'s plan into ``fig`` (a Figure or SubFigure); the marks of its boxes."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, Rectangle

    marks: dict[str, Mark] = {}
    pools = module.plan.pools
    axes = fig.subplots(len(pools), 1, squeeze=False)[:, 0]
    n_ops = max(len(module.graph.operators), 1)
    fig.suptitle(f"memory plan of {module.graph.name} on {module.target}", fontsize=11)
    for ax, (name, pool) in zip(axes, pools.items()):
        allocs = pool.allocations()
        top = pool.size
        for a in allocs:
            scratch = a.kind == "scratch"
            box = Rectangle((a.first_op - HALF_WIDTH, a.offset), a.last_op - a.first_op + 2 * HALF_WIDTH, a.size,
                            facecolor=_SCRATCH if scratch else _TENSOR, edgecolor="white", linewidth=0.6,
                            hatch="//" if scratch else None, alpha=0.9)
            gid = buffer_id(a)
            box.set_gid(gid)
            ax.add_patch(box)
            marks[gid] = Mark({"pool": a.pool, "kind": a.kind, "tensor": a.tensor if a.tensor is not None else "",
                               "operator": a.operator if a.operator is not None else "", "offset": a.offset,
                               "size": a.size, "first-op": a.first_op, "last-op": a.last_op},
                              _label(module, a))
        peak = ax.axhline(pool.size, color=_PEAK, linewidth=1.2, linestyle="--")
        peak.set_gid(f"peak-{name}")
        marks[f"peak-{name}"] = Mark({"pool": name, "bytes": pool.size}, f"{name} pool: {pool.size:,} B")
        handles = [Patch(facecolor=_TENSOR, label="tensor"), Patch(facecolor=_SCRATCH, hatch="//", label="scratch"),
                   Line2D([], [], color=_PEAK, linestyle="--", label=f"plan peak {pool.size:,} B")]
        if name == HOST and arena is not None:
            if arena.total is not None:
                line = ax.axhline(arena.total, color=_TFLM, linewidth=1.2, linestyle=":")
                line.set_gid("tflm-arena")
                marks["tflm-arena"] = Mark({"bytes": arena.total, "head": arena.head or ""}, arena.describe())
                top = max(top, arena.total)
            handles.append(Line2D([], [], color=_TFLM, linestyle=":", label=arena.describe()))
            if arena.head is not None:
                head = ax.axhline(arena.head, color=_TFLM, linewidth=0.8, linestyle=(0, (1, 4)))
                head.set_gid("tflm-arena-head")
                marks["tflm-arena-head"] = Mark({"bytes": arena.head},
                                                f"TFLM arena head {arena.head:,} B: the tensors and scratch it plans")
                handles.append(Line2D([], [], color=_TFLM, linestyle=(0, (1, 4)),
                                      label=f"TFLM head (tensors + scratch) {arena.head:,} B"))
        ax.set_xlim(-0.5 - HALF_WIDTH, n_ops - 0.5 + HALF_WIDTH)
        ax.set_ylim(0, max(top, 1) * 1.08)
        ax.set_ylabel("offset (B)" if name == HOST else "block offset (B)")
        ax.set_xlabel("operator")
        ax.xaxis.get_major_locator().set_params(integer=True)
        where = "host arena" if name == HOST else f"{name} memory ({len(pool.blocks)} blocks end to end)"
        ax.set_title(f"{where}: {pool.size:,} B = {pool.activation_bytes:,} B activations + "
                     f"{pool.scratch_bytes:,} B scratch; {len(allocs)} buffers", fontsize=9)
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return marks
