"""Paired, interleaved timing: what a loaded machine does to one side it does to the other.

Two measurements taken minutes apart on a shared machine differ by more than the kernels do; taken back to
back, a burst of load moves both.  So every round times each candidate right beside its reference (the order
flipping every round) and a ratio is the median of the rounds' own ratios, not a ratio of two medians.
Times are the calling thread's CPU time (:data:`CLOCK`): the time the process waits while other processes
run is not counted.  Every side measured here computes in the calling thread (tvmdevice's executor,
tflite-micro, LiteRT with one thread), so its CPU time is its whole cost.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable, Sequence

__all__ = ["CLOCK", "calls_per_sample", "paired", "profiled_steps", "seconds_per_call"]

#: The clock of every sample: the calling thread's CPU time, in seconds.
CLOCK = time.thread_time


def calls_per_sample(fn: Callable[[], object], min_time: float) -> int:
    """How many calls of ``fn`` take about ``min_time`` seconds of CPU time (after one warm-up call), at least one."""
    fn()
    number, start = 0, CLOCK()
    while number == 0 or CLOCK() - start < min_time:
        fn()
        number += 1
    return number


def seconds_per_call(fn: Callable[[], object], number: int) -> float:
    """The mean CPU time of ``number`` back-to-back calls of ``fn``."""
    t0 = CLOCK()
    for _ in range(number):
        fn()
    return (CLOCK() - t0) / number


def paired(levels: Sequence[str], select: Callable[[str], None], ours: Callable[[], object],
           reference: Callable[[], object], rounds: int, min_time: float) -> dict[str, dict[str, float]]:
    """``ours`` on each of ``levels`` (chosen by ``select``) against ``reference``, interleaved.

    Each round times, for every level, one sample of ``ours`` and one of ``reference`` back to back, the
    reference first on odd rounds.  Returns per level ``ours_s`` and ``reference_s`` (median seconds per
    call) and ``ratio``, the median over the rounds of reference time / our time.
    """
    numbers = {}
    for level in levels:
        select(level)
        numbers[level] = calls_per_sample(ours, min_time)
    n_ref = calls_per_sample(reference, min_time)
    samples: dict[str, tuple[list[float], list[float]]] = {level: ([], []) for level in levels}
    for r in range(rounds):
        for level in levels:
            select(level)
            mine, theirs = samples[level]
            if r % 2:
                theirs.append(seconds_per_call(reference, n_ref))
                mine.append(seconds_per_call(ours, numbers[level]))
            else:
                mine.append(seconds_per_call(ours, numbers[level]))
                theirs.append(seconds_per_call(reference, n_ref))
    return {level: {"ours_s": statistics.median(mine), "reference_s": statistics.median(theirs),
                    "ratio": statistics.median(t / m for m, t in zip(mine, theirs))}
            for level, (mine, theirs) in samples.items()}


def profiled_steps(levels: Sequence[str], select: Callable[[str], None], ex,
                   rounds: int) -> tuple[dict[str, list[dict[int, int]]], list[tuple[str, str]]]:
    """Each step's time on each level (the executor's profiled run), the levels interleaved round by round.

    A round runs, for every level in turn (the order reversed every other round), two profiled invocations
    and keeps the second (warm: the previous level's code has just run).  Returns per level one
    ``{step: ns}`` dict per round, and the steps' ``(label, device)``.
    """
    per: dict[str, list[dict[int, int]]] = {level: [] for level in levels}
    labels: dict[int, tuple[str, str]] = {}
    for r in range(rounds):
        for level in (levels if r % 2 == 0 else list(reversed(levels))):
            select(level)
            ex.invoke(profile=True)
            ex.invoke(profile=True)
            per[level].append({t.step: t.ns for t in ex.timings})
            labels.update({t.step: (t.label, t.device) for t in ex.timings})
    return per, [labels[k] for k in sorted(labels)]
