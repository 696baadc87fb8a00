"""Dataset evaluation: one job, run in chunks by whichever engine, results in sample order.

An :class:`EvalJob` is plain, picklable data (the model's bytes or an
export's directory, the target, the reference), so the same job runs in this
process, in local worker processes (``--workers N``) or as Ray tasks
(``--engine ray``).  Every chunk compiles the model once per process and
returns one :class:`SampleResult` per sample; results are put back in sample
order whatever order chunks finish in, so every engine gives the same
report.

A model with operator state (TFLite variable tensors: LSTM, SVDF) makes its
samples one sequence: they run in order as one chunk, sample 0 from the reset
state and each next one from the state the sample before left (as TFLM's
interpreter invoked once per sample, which the reference is), whatever the
engine and workers; an export runs the whole sequence in one process.

Ctrl-C (SIGINT) stops an evaluation at once: the workers ignore SIGINT and are
terminated by the parent rather than waited for, and :class:`EvalInterrupted`
carries the results of the chunks that had finished.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["EvalJob", "SampleResult", "EvalInterrupted", "evaluate", "run_chunk", "chunks", "release", "ENGINES"]

#: The engines ``--engine`` accepts.
ENGINES = ("local", "ray")

#: Environment variables a worker takes from the job, so that it loads the same plugins as the parent.
_FORWARDED_ENV = ("TVMDEVICE_PLUGINS", "TVMDEVICE_DISABLE_PLUGIN_AUTOLOAD", "TVMDEVICE_PROBE_TIMEOUT",
                  "TVMDEVICE_MAX_TENSOR_BYTES")


@dataclass(frozen=True)
class EvalJob:
    """What every chunk of an evaluation needs (picklable).

    :ivar model: the ``.tflite`` bytes (the reference runs them too).
    :ivar target: the target string (None: every installed device); unused for an export.
    :ivar export_dir: run this export under ``cpu`` instead of compiling in-process.
    :ivar reference: ``"tflite-micro"`` to check each sample's outputs bit for bit, or None.
    :ivar top: how many classes to keep per sample.
    :ivar stateful: the model keeps operator state across runs: the samples are one sequence.
    :ivar float_model: a float model's ``.tflite`` bytes to compare each sample's dequantized outputs with
        (LiteRT runs it on the dequantized inputs), or None.
    :ivar input_specs: the model's input :class:`~.inputs.TensorSpec` (their quantization), for ``float_model``.
    :ivar output_specs: the model's output specs, for ``float_model``.
    """

    model: bytes
    name: str
    target: str | None = None
    export_dir: str | None = None
    cpu: str | None = None
    timeout: float = 120.0
    reference: str | None = None
    top: int = 5
    stateful: bool = False
    float_model: bytes | None = None
    input_specs: tuple[Any, ...] = ()
    output_specs: tuple[Any, ...] = ()
    env: dict[str, str] = field(default_factory=lambda: {k: os.environ[k] for k in _FORWARDED_ENV if k in os.environ})


@dataclass(frozen=True)
class SampleResult:
    """One sample's result: its best classes (output 0), agreement with the reference, a digest of its outputs,
    and against a float model, per output, :func:`.agreement.float_metrics`."""

    index: int
    top: list[int]
    scores: list[float]
    bit_exact: bool | None
    outputs_sha256: str
    instructions: int | None = None
    float_metrics: list[dict[str, Any]] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class EvalInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped :func:`evaluate`; ``results`` holds the samples of the chunks that finished,
    in sample order (the workers were stopped, not waited for)."""

    def __init__(self, results: list[SampleResult]) -> None:
        super().__init__(f"interrupted after {len(results)} samples")
        self.results = results


_COMPILED: dict[tuple[int, str | None, str | None], Any] = {}
_EXECUTORS: dict[tuple[int, str | None, str | None], Any] = {}
_OPEN: list[Any] = []  # executors this process opened for jobs


def release() -> None:
    """Close the executors this process opened for jobs (the in-process engine calls it when done)."""
    _COMPILED.clear()
    _EXECUTORS.clear()
    while _OPEN:
        _OPEN.pop().close()


def _runner(job: EvalJob, *, worker: bool) -> Callable[[list[np.ndarray]], tuple[list[np.ndarray], int | None]]:
    """A function running one sample for ``job``, built once per process.

    A worker process takes the job's ``TVMDEVICE_*`` settings; the parent process keeps its own
    environment (it already chose the plugins the job names).
    """
    key = (hash(job.model), job.target, job.export_dir)
    if key in _COMPILED:
        return _COMPILED[key]
    if worker:
        os.environ.update(job.env)
    if job.export_dir is not None:
        from ..export.run import run_export

        directory = job.export_dir

        def run(sample: list[np.ndarray]) -> tuple[list[np.ndarray], int | None]:
            r = run_export(directory, job.cpu or "host", sample, timeout=job.timeout)
            return r.outputs, r.instructions
    else:
        import tvmdevice

        module = tvmdevice.compile(job.model, job.target, name=job.name)
        executor = module.executor()  # kept for the process's life: one compile and open per worker
        _OPEN.append(executor)
        _EXECUTORS[key] = executor

        def run(sample: list[np.ndarray]) -> tuple[list[np.ndarray], int | None]:
            return executor.run(sample), None

    _COMPILED[key] = run
    return run


def run_chunk(job: EvalJob, start: int, samples: Sequence[list[np.ndarray]], worker: bool = True,
              ) -> list[SampleResult]:
    """Run ``samples`` (numbered from ``start``) and compare them with the reference.

    :param worker: whether this runs in a worker process (which takes the job's environment).
    """
    import hashlib

    from .inputs import top_k

    ran = _sequence(job, samples, worker) if job.stateful else None
    run = _runner(job, worker=worker) if ran is None else None
    reference = None
    floating = None
    if job.float_model is not None:
        from .float_reference import FloatReference

        floating = FloatReference(job.float_model, job.input_specs, job.output_specs)  # in order: its state too
    out = []
    for i, sample in enumerate(samples):
        outputs, instructions = ran[i] if ran is not None else run(sample)  # type: ignore[misc]
        exact = None
        if job.reference is not None:
            if reference is None:
                from .references import open_reference

                reference = open_reference(job.reference, job.model, len(outputs))
            theirs = reference.run(sample)
            exact = all(np.array_equal(a, np.asarray(b).reshape(a.shape)) for a, b in zip(outputs, theirs))
        digest = hashlib.sha256(b"".join(np.ascontiguousarray(o).tobytes() for o in outputs)).hexdigest()
        best = top_k(outputs[0], job.top)
        metrics = floating.compare(sample, outputs) if floating is not None else None
        out.append(SampleResult(start + i, [c for c, _ in best], [float(s) for _, s in best], exact, digest,
                                instructions, metrics))
    return out


def _sequence(job: EvalJob, samples: Sequence[list[np.ndarray]], worker: bool,
              ) -> list[tuple[list[np.ndarray], int | None]]:
    """A stateful model's samples run in order as one sequence from the reset state: each one's outputs
    (an export's instructions are its first run's, from the reset state)."""
    if job.export_dir is None:
        run = _runner(job, worker=worker)
        _EXECUTORS[(hash(job.model), job.target, job.export_dir)].reset_state()  # this process may have run it
        return [run(sample) for sample in samples]
    if worker:
        os.environ.update(job.env)
    from ..export.run import run_export_frames

    r = run_export_frames(job.export_dir, job.cpu or "host", samples, timeout=job.timeout * max(1, len(samples)))
    return [(frame, r.instructions if i == 0 else None) for i, frame in enumerate(r.frames)]


def chunks(n: int, parts: int) -> list[tuple[int, int]]:
    """``[start, stop)`` ranges covering ``range(n)``: about four per part, so that slow chunks even out."""
    size = max(1, -(-n // max(1, parts * 4)))
    return [(s, min(n, s + size)) for s in range(0, n, size)]


def evaluate(job: EvalJob, samples: Sequence[list[np.ndarray]], *, workers: int = 1, engine: str = "local",
             progress: Callable[[int], None] | None = None) -> list[SampleResult]:
    """Every sample's result, in sample order.

    :param workers: ``local``: worker processes (1: this process); ``ray``: chunks to split into per
        available CPU-equivalent (the cluster schedules them).
    :param engine: ``local`` or ``ray`` (``ray.init()`` joins ``RAY_ADDRESS`` or starts a local instance).
    :param progress: called with the number of samples each finished chunk held.
    :raises NotSupportedError: ``ray`` is not installed (``pip install 'tvmdevice[ray]'``).
    :raises EvalInterrupted: Ctrl-C: the results of the chunks finished so far are in it.
    """
    from ..errors import InvalidArgumentError

    if engine not in ENGINES:
        raise InvalidArgumentError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if workers < 1:
        raise InvalidArgumentError(f"--workers must be at least 1, not {workers}")
    # a stateful model's samples are one sequence: one chunk, in order
    ranges = [(0, len(samples))] if job.stateful and samples else chunks(len(samples), workers)
    parts: list[list[SampleResult]] = []  # each engine appends the chunks as they finish
    try:
        if engine == "ray":
            _ray(job, samples, ranges, progress, parts)
        elif workers == 1:
            try:
                _serial(job, samples, ranges, progress, parts)
            finally:
                release()
        else:
            _processes(job, samples, ranges, workers, progress, parts)
    except KeyboardInterrupt:
        raise EvalInterrupted(_ordered(parts)) from None
    return _ordered(parts)


def _ordered(parts: list[list[SampleResult]]) -> list[SampleResult]:
    return sorted((r for part in parts for r in part), key=lambda r: r.index)


def _serial(job: EvalJob, samples: Sequence[list[np.ndarray]], ranges: list[tuple[int, int]],
            progress: Callable[[int], None] | None, parts: list[list[SampleResult]]) -> None:
    for a, b in ranges:
        parts.append(run_chunk(job, a, samples[a:b], worker=False))
        if progress:
            progress(b - a)


def _ignore_sigint() -> None:
    """A worker's initializer: Ctrl-C in a terminal reaches the whole process group; the parent handles it
    (and stops the workers), a worker does not print its own traceback."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _processes(job: EvalJob, samples: Sequence[list[np.ndarray]], ranges: list[tuple[int, int]], workers: int,
               progress: Callable[[int], None] | None, parts: list[list[SampleResult]]) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    before = {p.pid for p in multiprocessing.active_children()}
    # spawn: a worker starts clean (no inherited device state, threads or open handles from this process).
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_ignore_sigint)
    try:
        futures = {pool.submit(run_chunk, job, a, list(samples[a:b])): b - a for a, b in ranges}
        for f in as_completed(futures):
            parts.append(f.result())
            if progress:
                progress(futures[f])
    except KeyboardInterrupt:
        # stop now: the chunks running are abandoned, not waited for (the pool's own shutdown would)
        pool.shutdown(wait=False, cancel_futures=True)
        workers_started = [p for p in multiprocessing.active_children() if p.pid not in before]
        for p in workers_started:
            p.terminate()
        for p in workers_started:
            p.join(timeout=1.0)
        raise
    pool.shutdown(wait=True)


def _ray(job: EvalJob, samples: Sequence[list[np.ndarray]], ranges: list[tuple[int, int]],
         progress: Callable[[int], None] | None, parts: list[list[SampleResult]]) -> None:
    import importlib.util

    from ..errors import NotSupportedError

    if importlib.util.find_spec("ray") is None:
        raise NotSupportedError("--engine ray needs Ray, which is not installed: pip install 'tvmdevice[ray]'")
    import logging

    import ray

    started = not ray.is_initialized()
    if started:
        # The address comes from RAY_ADDRESS when set (an existing cluster), else a local instance starts.
        ray.init(address=os.environ.get("RAY_ADDRESS") or None, include_dashboard=False,
                 logging_level=logging.WARNING)
    try:
        task = ray.remote(run_chunk)
        refs = [(task.remote(job, a, list(samples[a:b])), b - a) for a, b in ranges]
        for ref, n in refs:  # in submission order: the progress lags a slow chunk, the results do not
            parts.append(ray.get(ref))
            if progress:
                progress(n)
    finally:
        if started:
            ray.shutdown()  # leave no cluster connection (or local instance) behind this call
