"""Panels drawn into one matplotlib figure, saved as SVG (marked, :mod:`.svg_marks`) or PNG.

A panel is a height in inches and a function that draws into a
``SubFigure`` and returns the marks of what it drew; panels stack top to
bottom.  Figures are made without pyplot (no GUI backend, no global state),
with SVG text kept as text (searchable, and the browser's fonts).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any, Callable

from .svg_marks import Mark, mark_svg

__all__ = ["Panel", "render_svg", "render_png", "WIDTH_INCHES"]

WIDTH_INCHES = 11.0
_STYLE = {"svg.fonttype": "none", "svg.hashsalt": "tvmdevice", "font.size": 9}


@dataclass(frozen=True)
class Panel:
    """``height`` inches drawn by ``draw(subfigure) -> marks``."""

    height: float
    draw: Callable[[Any], dict[str, Mark]]


def _figure(panels: list[Panel]) -> tuple[Any, dict[str, Mark]]:
    from matplotlib.figure import Figure

    heights = [p.height for p in panels]
    fig = Figure(figsize=(WIDTH_INCHES, sum(heights)), layout="constrained")
    subs = fig.subfigures(len(panels), 1, height_ratios=heights, squeeze=False)[:, 0]
    marks: dict[str, Mark] = {}
    for sub, panel in zip(subs, panels):
        marks.update(panel.draw(sub))
    return fig, marks


def render_svg(panels: list[Panel], prefix: str = "") -> str:
    """The panels as one SVG document's text, every named element marked (``prefix``: see :func:`mark_svg`)."""
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        fig, marks = _figure(panels)
        out = io.StringIO()
        fig.savefig(out, format="svg")
    return mark_svg(out.getvalue(), marks, prefix)


def render_png(panels: list[Panel]) -> bytes:
    """The panels as one PNG image."""
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        fig, _ = _figure(panels)
        out = io.BytesIO()
        fig.savefig(out, format="png", dpi=100)
    return out.getvalue()
