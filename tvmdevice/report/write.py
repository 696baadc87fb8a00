"""Write the pictures of a compiled model to one file, in the format its suffix names."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from .cost_figure import costs_height, draw_costs
from .html_report import html_report
from .memory_figure import draw_memory, memory_height
from .output import check_plot_path
from .placement_figure import draw_placement, placement_height
from .render import Panel, render_png, render_svg
from .tflm_arena import TFLMArena
from .timings import OperatorCost

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule

__all__ = ["write_plot"]


def _sections(module: "CompiledModule", costs: list[OperatorCost] | None,
              arena: TFLMArena | None) -> list[tuple[str, Panel]]:
    sections = [("Memory plan", Panel(memory_height(module), lambda fig: draw_memory(fig, module, arena))),
                ("Placement", Panel(placement_height(module), lambda fig: draw_placement(fig, module)))]
    if costs:
        sections.append(("Per-operator cost", Panel(costs_height(costs), lambda fig: draw_costs(fig, module, costs))))
    return sections


def _write_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_plot(path: str, module: "CompiledModule", *, costs: list[OperatorCost] | None = None,
               arena: TFLMArena | None = None) -> Path:
    """Draw the memory plan, the placement and (given ``costs``) the per-operator cost of ``module`` into ``path``.

    ``.svg`` and ``.png``: one image, the pictures stacked; ``.html``: a page with each picture inline
    and the table of buffers.  The file is replaced whole, never left half-written.

    :param arena: TFLM's arena for the model, drawn beside the host pool (:func:`~.tflm_arena.measure_tflm_arena`).
    """
    p = check_plot_path(path)
    sections = _sections(module, costs, arena)
    suffix = p.suffix.lower()
    if suffix == ".html":
        data = html_report(module, sections).encode()
    elif suffix == ".svg":
        data = render_svg([panel for _, panel in sections]).encode()
    else:
        data = render_png([panel for _, panel in sections])
    _write_atomically(p, data)
    return p
