"""One HTML file that shows a compiled model: its pictures inline, and the table of its buffers.

The file needs no network: every picture is an inline SVG (tooltips are their
``<title>`` elements), the style is inline, nothing is fetched.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from .render import Panel, render_svg
from .svg_marks import SVG_NS

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule

__all__ = ["html_report"]

_NAME_CHARS = 60

_STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
figure { margin: 0; } svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: 0.85em; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
th { background: #f0f0f0; } td.l { text-align: left; }
"""


def _inline(svg: str) -> str:
    """An SVG document as an element of an HTML page: the HTML parser knows the SVG namespace."""
    return svg.replace(f' xmlns="{SVG_NS}"', "").replace(' xmlns:xlink="http://www.w3.org/1999/xlink"', "")


def _buffers_table(module: "CompiledModule") -> str:
    rows = []
    for a in module.plan.allocations():
        if a.kind == "tensor" and a.tensor is not None:
            t = module.graph.tensors[a.tensor]
            name = t.name if len(t.name) <= _NAME_CHARS else t.name[:_NAME_CHARS - 1] + "…"
            what = f"tensor #{a.tensor} {html.escape(name)} {tuple(t.shape)}"
        else:
            what = f"scratch of #{a.operator}"
        rows.append(f"<tr><td>{a.pool}</td><td class=l>{what}</td><td>{a.offset:,}</td><td>{a.size:,}</td>"
                    f"<td>#{a.first_op}</td><td>#{a.last_op}</td></tr>")
    return ("<table><tr><th>pool</th><th>buffer</th><th>offset (B)</th><th>size (B)</th><th>first op</th>"
            "<th>last op</th></tr>" + "".join(rows) + "</table>")


def html_report(module: "CompiledModule", sections: list[tuple[str, Panel]]) -> str:
    """The page: a heading, each ``(title, panel)`` as an inline SVG, then the buffers' table."""
    title = f"{module.graph.name} on {module.target}"
    parts = [f"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>tvmdevice: {html.escape(title)}"
             f"</title><style>{_STYLE}</style></head><body>",
             f"<h1>tvmdevice: {html.escape(title)}</h1>",
             f"<p>{len(module.graph.operators)} operators; RAM "
             + ", ".join(f"{html.escape(name)} {pool.size:,} B" for name, pool in module.plan.pools.items())
             + ". Hover a box, node or bar for its details.</p>"]
    for k, (heading, panel) in enumerate(sections):
        parts.append(f"<h2>{html.escape(heading)}</h2><figure>{_inline(render_svg([panel], f'fig{k}-'))}</figure>")
    parts.append(f"<h2>Buffers</h2>{_buffers_table(module)}</body></html>\n")
    return "\n".join(parts)
