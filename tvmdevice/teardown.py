"""Teardown that always finishes: every step runs, failures are raised together afterwards.

The Device API's promise is that Close and Destroy always work and nothing
leaks.  So a teardown (:meth:`Device.release <tvmdevice.device.Device.release>`,
:meth:`Device.close <tvmdevice.device.Device.close>`,
:meth:`Executor.close <tvmdevice.aot.executor.Executor.close>`) never stops
at the first failure: :class:`Steps` runs each step, keeps what it raised —
``KeyboardInterrupt`` included — and raises it all once the last step ran.
:func:`deferred_interrupts` holds a Ctrl-C back until then, so an interrupt
cannot leave a device half torn down either.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from .errors import TeardownError

__all__ = ["Steps", "deferred_interrupts", "attach_cleanup_error"]


def attach_cleanup_error(original: BaseException, cleanup: BaseException) -> None:
    """Record on ``original`` an error raised while cleaning up after it, without replacing it.

    The cleanup error is kept in ``original.cleanup_errors`` and, on Python
    3.11+, shown as a note under the original's traceback.
    """
    errors = getattr(original, "cleanup_errors", None)
    if errors is None:
        errors = []
        try:
            original.cleanup_errors = errors  # type: ignore[attr-defined]
        except AttributeError:  # exceptions with __slots__: nothing more to keep
            return
    errors.append(cleanup)
    add_note = getattr(original, "add_note", None)
    if add_note is not None:
        add_note(f"while cleaning up after this error, another one occurred: {type(cleanup).__name__}: {cleanup}")


class Steps:
    """The errors of one teardown, collected step by step.

    ::

        steps = Steps("closing the executor")
        for ptr in blocks:
            steps.run(device.free_data_space, ptr)
        steps.run(device.release)
        steps.raise_errors()

    :param what: what is being torn down, for the combined error's message.
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self.errors: list[BaseException] = []

    def run(self, step: Callable[..., Any], *args: Any) -> bool:
        """Call ``step(*args)``; keep what it raises (anything, interrupts too).  True if it succeeded."""
        try:
            step(*args)
        except TeardownError as exc:  # a nested teardown: keep its errors, not a wrapper
            self.errors.extend(exc.errors)
        except BaseException as exc:  # noqa: BLE001 - raised again by raise_errors()
            self.errors.append(exc)
        else:
            return True
        return False

    def raise_errors(self) -> None:
        """Raise what the steps raised, if anything.

        An interrupt (``KeyboardInterrupt``, ``SystemExit``) wins — the user
        asked to stop — with the other errors attached as ``cleanup_errors``;
        otherwise one error is raised as itself and several as a
        :class:`~tvmdevice.errors.TeardownError` caused by the first.
        """
        if not self.errors:
            return
        errors, self.errors = self.errors, []
        interrupt = next((e for e in errors if not isinstance(e, Exception)), None)
        if interrupt is not None:
            for other in errors:
                if other is not interrupt:
                    attach_cleanup_error(interrupt, other)
            raise interrupt
        if len(errors) == 1:
            raise errors[0]
        raise TeardownError(self.what, errors) from errors[0]


@contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Hold back Ctrl-C (SIGINT) for the duration of the block; raise ``KeyboardInterrupt`` after it.

    A second Ctrl-C during the block interrupts at once (a hook that hangs
    must stay interruptible).  Only the main thread receives signals, and
    only Python's default handler is replaced: elsewhere, and under a
    custom handler, the block runs unchanged — a ``KeyboardInterrupt`` that
    arrives anyway is still caught by :class:`Steps`, which finishes the
    teardown before raising it.
    """
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    pending: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        if pending:
            raise KeyboardInterrupt
        pending.append(signum)

    try:
        previous = signal.signal(signal.SIGINT, hold)
    except ValueError:  # not the main interpreter
        yield
        return
    try:
        yield
    except BaseException as exc:
        signal.signal(signal.SIGINT, previous)
        if pending and isinstance(exc, Exception):
            interrupt = KeyboardInterrupt()
            attach_cleanup_error(interrupt, exc)
            raise interrupt from exc
        raise
    signal.signal(signal.SIGINT, previous)
    if pending:
        raise KeyboardInterrupt
