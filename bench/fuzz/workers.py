"""Crash-isolated worker processes with memory and time limits."""

from __future__ import annotations

import os
from typing import Any

from .legs import tflm_case, tvm_case


def _limit_memory(mem_mb: int) -> None:
    if mem_mb > 0:
        import resource

        limit = mem_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _worker_main(conn: Any, kind: str, mem_mb: int, quiet: bool) -> None:
    _limit_memory(mem_mb)
    if quiet:  # TFLM and the C kernels print to fd 1/2 from C; keep the console for the progress line
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    os.environ.setdefault("TVMDEVICE_NO_PROGRESS", "1")
    import warnings

    warnings.simplefilter("ignore")
    if kind == "tvm":
        import tvmdevice  # noqa: F401 - import once, before the first case
    else:
        from tflite_micro.python.tflite_micro import runtime  # noqa: F401
    conn.send("ready")
    while True:
        msg = conn.recv()
        if msg is None:
            return
        conn.send(tvm_case(**msg) if kind == "tvm" else tflm_case(**msg))


class Worker:
    """One crash-isolated subprocess; restarted after a crash or a hang."""

    def __init__(self, kind: str, mem_mb: int, ctx: Any, quiet: bool = True) -> None:
        self.kind, self.mem_mb, self.ctx, self.quiet = kind, mem_mb, ctx, quiet
        self.proc: Any = None
        self.conn: Any = None
        self.restarts = 0

    def _start(self) -> None:
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker_main, args=(child, self.kind, self.mem_mb, self.quiet),
                                       daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        if not self.conn.poll(120):
            raise RuntimeError(f"{self.kind} worker did not start")
        self.conn.recv()

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.join(5)
            self.conn.close()
        self.proc = None
        self.restarts += 1

    def call(self, msg: Any, timeout: float) -> tuple[str, Any]:
        """``("ok", reply)``, ``("crash", exitcode)`` or ``("hang", None)``."""
        if self.proc is None or not self.proc.is_alive():
            self._start()
        try:
            self.conn.send(msg)
            if self.conn.poll(timeout):
                return "ok", self.conn.recv()
        except (EOFError, OSError):
            self.proc.join(2)  # the pipe closed: the worker is dying, let it finish
        alive = self.proc.is_alive()
        code = self.proc.exitcode
        self.kill()
        return ("hang", None) if alive else ("crash", code)

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.proc.join(2)
            if self.proc.is_alive():
                self.proc.kill()
