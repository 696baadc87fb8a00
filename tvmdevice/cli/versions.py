"""``tvmdevice --version``: the core's version and each installed plugin distribution's."""

from __future__ import annotations

from importlib import metadata

__all__ = ["version_lines"]


def version_lines() -> list[str]:
    """``tvmdevice X`` then one line per distribution with a ``tvmdevice`` entry point (none imported)."""
    from .. import __version__
    from ..registry import ENTRY_POINT_GROUP

    lines = [f"tvmdevice {__version__}"]
    seen: set[str] = set()
    for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        dist = ep.dist
        name = dist.metadata["Name"] if dist is not None else "?"
        version = dist.version if dist is not None else "?"
        if name in seen:
            continue
        seen.add(name)
        lines.append(f"{name} {version} (plugin {ep.name})")
    return lines
