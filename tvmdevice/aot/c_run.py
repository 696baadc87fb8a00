"""A run done in C, with one typed answer.

:class:`~tvmdevice.aot._runloop.CRun` answers in the C layer's terms (None,
False or a tuple, depending on the call); the executor and the batch runner
ask through :func:`invoke_in_c` and :func:`batch_in_c`, which say the same
three things one way: every step (sample) ran, C declined and did nothing (a
device not ready, an array not a C buffer: the Python path takes over and
explains), or it stopped at a :class:`CycleStop`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ._runloop import CRun

__all__ = ["CRunResult", "CycleStop", "Ran", "invoke_in_c", "batch_in_c"]


class Ran(enum.Enum):
    """What a request to run in C came to."""

    DONE = "done"          # everything ran
    DECLINED = "declined"  # nothing was done: take the Python path
    STOPPED = "stopped"    # a status stopped it: see CRunResult.stop


@dataclass(frozen=True)
class CycleStop:
    """Where :meth:`RunLoop.cycle` stopped: ``phase`` (ACTIVATE_FAILED, STEP_FAILED, DEACTIVATE_FAILED of
    :mod:`tvmdevice.aot._runloop`), the device or step ``index``, the C ``status``, and in a batch the
    ``sample`` (those before it are done)."""

    phase: int
    index: int
    status: int
    sample: int = -1


@dataclass(frozen=True)
class CRunResult:
    """The answer of :func:`invoke_in_c` or :func:`batch_in_c`."""

    ran: Ran
    stop: CycleStop | None = None


_DONE = CRunResult(Ran.DONE)
_DECLINED = CRunResult(Ran.DECLINED)


def invoke_in_c(crun: CRun) -> CRunResult:
    """One run of the plan on the inputs in place (:meth:`CRun.invoke`)."""
    answer = crun.invoke()
    if answer is None:
        return _DONE
    if answer is False:
        return _DECLINED
    return CRunResult(Ran.STOPPED, CycleStop(*answer))


def batch_in_c(crun: CRun, stacked: Sequence[np.ndarray], out: Sequence[np.ndarray], start: int,
               stop: int) -> CRunResult:
    """Samples ``[start, stop)`` of a batch (:meth:`CRun.run_batch`)."""
    answer = crun.run_batch(stacked, out, start, stop)
    if answer is None:
        return _DONE
    if answer is False:
        return _DECLINED
    phase, index, status, sample = answer
    return CRunResult(Ran.STOPPED, CycleStop(phase, index, status, sample))
