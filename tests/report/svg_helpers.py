"""Reading the pictures' SVG back: named elements, their data attributes, their drawn boxes and fills."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np

NS = "{http://www.w3.org/2000/svg}"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def groups(root: ET.Element, prefix: str) -> dict[str, ET.Element]:
    """Every element whose id starts with ``prefix``, by id."""
    return {el.get("id"): el for el in root.iter() if (el.get("id") or "").startswith(prefix)}


def _path(group: ET.Element) -> ET.Element:
    paths = list(group.iter(f"{NS}path"))
    assert paths, f"{group.get('id')} draws nothing"
    return paths[0]


def bbox(group: ET.Element) -> tuple[float, float, float, float]:
    """``(xmin, xmax, ymin, ymax)`` in SVG pixels of the group's first path."""
    coords = [float(v) for v in _NUMBER.findall(_path(group).get("d", ""))]
    xs, ys = coords[0::2], coords[1::2]
    return min(xs), max(xs), min(ys), max(ys)


def fill(group: ET.Element) -> str:
    """The fill of the group's first path: a colour ``#rrggbb`` or a pattern ``url(#id)``."""
    style = _path(group).get("style", "")
    match = re.search(r"fill:\s*(#[0-9a-fA-F]{6}|url\(#[^)]+\))", style)
    assert match, style
    return match.group(1).lower()


def linear(pairs: list[tuple[float, float]], tolerance: float = 0.05) -> tuple[float, float]:
    """``(slope, intercept)`` of pixel = slope * data + intercept, asserting every pair lies on it."""
    data = np.array([[d, 1.0] for d, _ in pairs])
    pix = np.array([p for _, p in pairs])
    (slope, intercept), *_ = np.linalg.lstsq(data, pix, rcond=None)
    worst = float(np.max(np.abs(data @ np.array([slope, intercept]) - pix)))
    assert worst < tolerance, f"not drawn to one scale: off by {worst:.3f} px"
    return float(slope), float(intercept)
