"""``bench``'s progress: one bar per phase (timed runs, profiled runs, each reference's runs) on stderr
when stderr is a terminal, nothing otherwise (a log or a pipe gets only the results)."""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["BenchProgress"]


class BenchProgress:
    """A context manager; :meth:`phase` starts a phase of ``total`` steps and returns the callable that
    advances it by one."""

    def __init__(self, console: Any = None) -> None:
        from rich.console import Console

        self._console = console or Console(stderr=True, highlight=False, soft_wrap=True)
        self._progress: Any = None

    @property
    def shown(self) -> bool:
        """Whether progress is drawn (stderr is a terminal)."""
        return bool(self._console.is_terminal)

    def __enter__(self) -> "BenchProgress":
        if self.shown:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeRemainingColumn(), console=self._console, transient=True)
            self._progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)
            self._progress = None

    def phase(self, description: str, total: int) -> Callable[[], None]:
        """Start a phase; the returned callable marks one step of it done."""
        if self._progress is None:
            return lambda: None
        progress = self._progress
        task = progress.add_task(description, total=total)
        progress.refresh()  # drawn when it starts, however short it is
        return lambda: progress.advance(task)
