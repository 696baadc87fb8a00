"""Marks on matplotlib's SVG: data attributes and tooltips on the elements a picture named.

Matplotlib writes each artist given a ``gid`` as ``<g id="gid">``.  The
pictures name every box, node and bar that way; :func:`mark_svg` then adds
what the element stands for as ``data-*`` attributes (so a reader or a test
finds each buffer's offset and lifetime without measuring pixels) and a
``<title>`` (the browser's tooltip: the reasons a device declined, a
buffer's tensor).  It also drops matplotlib's RDF metadata and the automatic
ids nothing refers to, and prefixes the ones something refers to (clip
paths, hatch patterns), so several pictures can sit in one HTML page.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

__all__ = ["Mark", "mark_svg", "SVG_NS"]

SVG_NS = "http://www.w3.org/2000/svg"
_XLINK_NS = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", _XLINK_NS)

_REFERENCE = re.compile(r"url\(#([^)]+)\)")


@dataclass
class Mark:
    """What one named element stands for: ``data-*`` attributes and a tooltip."""

    data: dict[str, object] = field(default_factory=dict)
    title: str | None = None


def mark_svg(svg: str, marks: dict[str, Mark], prefix: str = "") -> str:
    """``svg`` with each element whose id is a key of ``marks`` marked (see the module docstring).

    :param prefix: put before each id matplotlib made that something refers to (unique per picture of a page).

    :raises ValueError: when a mark names no element (a picture drew less than it claims).
    """
    root = ET.fromstring(svg)
    referenced = set()
    for el in root.iter():
        for name, value in el.attrib.items():
            referenced.update(_REFERENCE.findall(value))
            if name == f"{{{_XLINK_NS}}}href" and value.startswith("#"):
                referenced.add(value[1:])
    found = set()
    for parent in root.iter():
        for el in list(parent):
            if el.tag == f"{{{SVG_NS}}}metadata":
                parent.remove(el)
    for el in root.iter():
        ident = el.get("id")
        if ident is None:
            continue
        mark = marks.get(ident)
        if mark is None:
            if ident in referenced:
                el.set("id", prefix + ident)
            elif el is not root:
                del el.attrib["id"]
            continue
        found.add(ident)
        for key, datum in mark.data.items():
            el.set(f"data-{key}", str(datum))
        if mark.title:
            title = ET.Element(f"{{{SVG_NS}}}title")
            title.text = mark.title
            el.insert(0, title)
    if prefix:
        for el in root.iter():
            for name, value in el.attrib.items():
                if "url(#" in value:
                    el.set(name, _REFERENCE.sub(lambda m: f"url(#{prefix}{m.group(1)})", value))
                elif name == f"{{{_XLINK_NS}}}href" and value.startswith("#"):
                    el.set(name, f"#{prefix}{value[1:]}")
    missing = set(marks) - found
    if missing:
        raise ValueError(f"the picture has no element for {sorted(missing)[:5]}")
    return ET.tostring(root, encoding="unicode")
