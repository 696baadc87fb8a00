"""``run_batch``: a stacked batch run sample by sample, in order or split over worker executors.

A :class:`BatchRunner` belongs to one executor (its *owner*).  In order, every
sample runs on the owner.  Split over ``n`` workers, the batch is cut into
``n`` contiguous chunks: the first runs on the owner, each other one on a
worker executor of its own (created on first use, kept until the owner
closes) whose C run loop releases the GIL, from a thread pool whose size the
runner keeps itself.  Each sample is one run: results are bit-exact with
running them one by one.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ..teardown import Steps
from .io_checks import check_batch_out, check_stacked, check_workers

if TYPE_CHECKING:  # pragma: no cover
    from .executor import Executor

__all__ = ["BatchRunner"]


class BatchRunner:
    """The batch runs of ``owner``: checks, the chunks, and the worker executors with their threads.

    :param owner: the executor :meth:`~tvmdevice.aot.executor.Executor.run_batch` was called on.
    :param make_worker: a new worker executor (the owner's module, ``release_gil=True``).
    """

    def __init__(self, owner: "Executor", make_worker: Callable[[], "Executor"]) -> None:
        self.owner = owner
        self._make_worker = make_worker
        #: The worker executors made so far, closed with the owner.
        self.workers: list["Executor"] = []
        self._threads: ThreadPoolExecutor | None = None
        self._thread_count = 0  # how many threads self._threads was made with

    def run(self, inputs: Sequence[np.ndarray], workers: int | None,
            out: Sequence[np.ndarray] | None) -> list[np.ndarray]:
        """:meth:`Executor.run_batch <tvmdevice.aot.executor.Executor.run_batch>`, which documents it."""
        owner = self.owner
        graph = owner.graph
        stacked, n = check_stacked(graph, inputs, owner._in_ports)
        wanted = check_workers(graph, workers, bool(owner.module.schedule.states))
        views = owner._out_views
        if out is None:
            out = [np.empty((n, *v.shape), v.dtype) for v in views]
        else:
            check_batch_out(graph, out, views, n)
        # Only a run done in C leaves the GIL: Python steps would run one thread at a time anyway.
        count = max(1, min(wanted, n)) if owner.runs_in_c else 1
        if count == 1:
            owner._run_samples(stacked, out, 0, n)
            return list(out)
        pool, threads = self._pool(count - 1)
        bounds = [n * w // count for w in range(count + 1)]
        futures = [threads.submit(worker._run_samples, stacked, out, bounds[w + 1], bounds[w + 2])
                   for w, worker in enumerate(pool)]
        errors: list[BaseException] = []
        try:
            owner._run_samples(stacked, out, bounds[0], bounds[1])
        except BaseException as exc:  # noqa: BLE001 - raised below once the workers are done
            errors.append(exc)
        for f in futures:
            failure = f.exception()
            if failure is not None:
                errors.append(failure)
        if errors:
            raise errors[0]
        return list(out)

    def _pool(self, count: int) -> tuple[list["Executor"], ThreadPoolExecutor]:
        """``count`` worker executors and a pool of at least ``count`` threads to run them, made on first
        use (under the owner's lock) and kept until :meth:`close`."""
        owner = self.owner
        with owner._lock.exclusive("run_batch()"):
            owner._check_open("run_batch()")
            while len(self.workers) < count:
                self.workers.append(self._make_worker())
            if self._threads is None or self._thread_count < count:
                if self._threads is not None:
                    self._threads.shutdown()
                self._threads = ThreadPoolExecutor(count, thread_name_prefix="tvmdevice-batch")
                self._thread_count = count
            return self.workers[:count], self._threads

    def close(self, steps: Steps) -> None:
        """Shut the threads down and close the workers, each a step of ``steps`` (the owner's teardown)."""
        workers, self.workers = self.workers, []
        threads, self._threads, self._thread_count = self._threads, None, 0
        if threads is not None:
            steps.run(threads.shutdown)
        for worker in workers:
            steps.run(worker.close)

    def __repr__(self) -> str:
        return f"<BatchRunner of {self.owner.graph.name!r}: {len(self.workers)} worker(s)>"


