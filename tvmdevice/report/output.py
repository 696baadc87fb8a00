"""The formats a picture is written in, and the check that one can be: its suffix and matplotlib."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ..errors import InvalidArgumentError

__all__ = ["PLOT_SUFFIXES", "PLOT_EXTRA", "check_plot_format"]

#: The formats ``--plot`` writes, by file suffix.
PLOT_SUFFIXES = (".svg", ".png", ".html")

#: What to install when matplotlib is missing.
PLOT_EXTRA = "pip install 'tvmdevice[plot]'"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken install, or a module set to None in sys.modules
        return False


def check_plot_format(path: str) -> str:
    """The format of ``path`` (``.svg``, ``.png`` or ``.html``), or one clear error: another suffix, or
    matplotlib (the ``plot`` extra) not installed.  Whether the path can be written is the caller's check
    (the CLI's :func:`tvmdevice.cli.output_paths.check_output_file`)."""
    suffix = Path(path).suffix.lower()
    if suffix not in PLOT_SUFFIXES:
        raise InvalidArgumentError(f"--plot {path!r}: the file must end in {', '.join(PLOT_SUFFIXES)} "
                                   "(the format is taken from the suffix)")
    if not _installed("matplotlib"):
        raise InvalidArgumentError(f"--plot draws with matplotlib, which is not installed: {PLOT_EXTRA}")
    return suffix
