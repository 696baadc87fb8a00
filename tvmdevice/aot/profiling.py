"""A profiled run: each step of the plan timed on its own, and drawn on a timeline if one is given."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

__all__ = ["StepTiming", "run_profiled"]


@dataclass(frozen=True)
class StepTiming:
    """How long step ``step`` (``label``, on ``device``) took, in ``ns``."""

    step: int
    label: str
    device: str
    ns: int


def run_profiled(loop: Any, labels: Sequence[tuple[str, str]], timings: list[StepTiming],
                 timeline: Any = None) -> None:
    """Run ``loop``'s steps one at a time, timing each into ``timings``; each becomes a span of ``timeline`` too.

    :param loop: the bound plan's :class:`~tvmdevice.aot._runloop.RunLoop` (``run(start, stop)``).
    :param labels: ``(label, device)`` per step.
    :param timings: appended to as each step finishes: after a failed step it holds the steps before it.
    :param timeline: a :class:`~tvmdevice.tracing.Timeline` (``add_span``), or None.
    """
    for i, (label, device) in enumerate(labels):
        start = time.perf_counter_ns()
        loop.run(i, i + 1)
        ns = time.perf_counter_ns() - start
        timings.append(StepTiming(i, label, device, ns))
        if timeline is not None:
            cat = "copy" if label.startswith("copy") else "kernel"
            timeline.add_span(label, cat, start, ns, device=device)
