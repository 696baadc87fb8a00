"""The executor's lock: runs on one executor are serialized, and a re-entrant call is refused.

A kernel or hook that calls back into the executor running it would wait for
itself forever; the lock remembers which thread holds it, so that call is a
:class:`~tvmdevice.errors.LifecycleError` instead.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

from ..errors import LifecycleError
from ._runloop import RunMutex

__all__ = ["RunLock"]

_get_ident = threading.get_ident


class RunLock:
    """A non-reentrant lock that refuses, rather than deadlocks on, a call from its own holder.

    :ivar lock: the underlying lock, a :class:`~tvmdevice.aot._runloop.RunMutex` (a ``threading.Lock``
        that the C run also takes directly); the executor's hot path takes it without waiting and calls
        :meth:`wait` only when it is busy.
    :ivar holder: the ident of the thread holding it for a call that may run Python (None otherwise);
        only that thread ever sets it to its own ident, so reading it needs no lock.
    """

    __slots__ = ("lock", "holder")

    def __init__(self) -> None:
        self.lock = RunMutex()
        self.holder: int | None = None

    def acquire(self, what: str) -> None:
        """Take the lock for ``what``."""
        if not self.lock.acquire(False):
            self.wait(what)
        self.holder = _get_ident()

    def wait(self, what: str) -> None:
        """The lock is taken: by this very thread (a re-entrant call, refused) or by another (wait for it)."""
        if self.holder == _get_ident():
            raise _reentrant(what)
        self.lock.acquire()

    def release(self) -> None:
        self.holder = None
        self.lock.release()

    @contextmanager
    def exclusive(self, what: str) -> Iterator[None]:
        """Hold the lock for ``what``."""
        me = _get_ident()
        if self.holder == me:
            raise _reentrant(what)
        with self.lock:
            self.holder = me
            try:
                yield
            finally:
                self.holder = None


def _reentrant(what: str) -> LifecycleError:
    return LifecycleError(f"{what} was called from inside this executor's own run (a kernel or hook calling back "
                          f"into the executor); call it after the run returns")
