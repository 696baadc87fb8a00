"""Where a picture goes: the suffixes understood, and the checks made before any work starts."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from ..errors import InvalidArgumentError

__all__ = ["PLOT_SUFFIXES", "check_plot_path", "require_matplotlib"]

#: The formats ``--plot`` writes, by file suffix.
PLOT_SUFFIXES = (".svg", ".png", ".html")

#: What to install when matplotlib is missing.
PLOT_EXTRA = "pip install 'tvmdevice[plot]'"


def require_matplotlib() -> None:
    """Raise one clear error when matplotlib (the ``plot`` extra) is not installed."""
    if importlib.util.find_spec("matplotlib") is None:
        raise InvalidArgumentError(f"--plot draws with matplotlib, which is not installed: {PLOT_EXTRA}")


def check_plot_path(path: str) -> Path:
    """``path`` as the file a picture will be written to, or one clear error.

    The suffix must be one of :data:`PLOT_SUFFIXES` and its folder an existing,
    writable directory; an existing directory in its place is refused.
    """
    p = Path(path)
    if p.suffix.lower() not in PLOT_SUFFIXES:
        raise InvalidArgumentError(f"--plot {path!r}: the file must end in {', '.join(PLOT_SUFFIXES)} "
                                   "(the format is taken from the suffix)")
    folder = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise InvalidArgumentError(f"--plot {path!r} is a directory; name a file in it")
    if folder.exists() and not folder.is_dir():
        raise InvalidArgumentError(f"--plot {path!r}: {str(folder)!r} is a file, not a folder")
    if not folder.is_dir():
        raise InvalidArgumentError(f"--plot {path!r}: folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise InvalidArgumentError(f"--plot {path!r} cannot be written (no permission)")
    require_matplotlib()
    return p
