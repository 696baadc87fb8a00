"""Telling the user's Ctrl-C apart from a KeyboardInterrupt that code raised itself."""

from __future__ import annotations

import signal
import threading
from typing import Any

__all__ = ["SigintWatch"]


class SigintWatch:
    """Tells a KeyboardInterrupt from a real Ctrl-C apart from one a plugin raised itself.

    While active (main thread only), a SIGINT sets :attr:`signalled` before the
    previous handler raises as usual.  In another thread no SIGINT can reach
    the code (Python delivers signals to the main thread), so a
    KeyboardInterrupt there was raised by the code.  When the previous handler
    is not Python's (installed from C), we cannot tell, and honour it.
    """

    def __init__(self) -> None:
        self.signalled = False
        self._previous: Any = None
        self._active = False
        self._blind = False

    def __enter__(self) -> "SigintWatch":
        if threading.current_thread() is not threading.main_thread():
            return self
        previous = signal.getsignal(signal.SIGINT)
        if previous is None:
            self._blind = True
        elif callable(previous):
            self._previous = previous
            signal.signal(signal.SIGINT, self._handler)
            self._active = True
        return self

    def _handler(self, signum: int, frame: Any) -> None:
        self.signalled = True
        self._previous(signum, frame)

    def user_interrupt(self) -> bool:
        """Whether the KeyboardInterrupt being handled is (or may be) the user's."""
        return self.signalled or self._blind

    def __exit__(self, *exc: object) -> None:
        if self._active:
            signal.signal(signal.SIGINT, self._previous)
