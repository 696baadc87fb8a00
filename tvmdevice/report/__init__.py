"""Pictures of a compiled model: its memory plan, its placement, and per-operator cost.

``tvmdevice info MODEL --plot FILE`` draws them with matplotlib (the optional
extra ``tvmdevice[plot]``, imported only here and only when a picture is
asked for):

* :mod:`.memory_figure`: each pool's buffers as boxes, operator lifetime by
  offset, scratch marked, the plan's peak and TFLM's arena beside it;
* :mod:`.placement_figure`: the operator graph coloured by device, with the
  reasons the other devices declined, partitions framed;
* :mod:`.cost_figure`: per-operator time or instructions as bars, from a
  timings file (:mod:`.timings`);
* :mod:`.html_report`: all of them in one HTML file that needs no network.

:func:`write_plot` picks the format from the file's suffix (``.svg``,
``.png`` or ``.html``); :func:`check_plot_path` refuses a bad one before any
work is done.
"""

from __future__ import annotations

from .output import PLOT_SUFFIXES, check_plot_path
from .timings import OperatorCost, read_timings
from .write import write_plot

__all__ = ["PLOT_SUFFIXES", "OperatorCost", "check_plot_path", "read_timings", "write_plot"]
