"""Threads: one executor shared by several threads serializes its runs; every result is bit-exact."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from plugin_fixtures import load_fixture_module

import tvmdevice
from tvmdevice import State
from tvmdevice.aot.builder import demo_model
from tvmdevice.aot.executor import Executor
from tvmdevice.errors import LifecycleError
from tvmdevice.registry import Registry
from tvmdevice.testing.reference import run_graph

THREADS, RUNS = 8, 40




def _registry_for(target: str, registry: Registry) -> Registry:
    if "accel" in target:
        registry.register(load_fixture_module("fixture_accel"), "accel")
        return registry
    if target == "c":
        return registry
    installed = Registry()
    missing = [name for name in target.split(", ")[:-1] if name not in installed.device_names()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (pip install ./plugins/...)")
    return installed


def _samples(module, n: int):
    """``n`` distinct inputs and the host reference's output for each."""
    rng = np.random.default_rng(7)
    (t,) = module.graph.inputs
    inputs = [rng.integers(-128, 128, module.graph.tensors[t].shape, dtype=np.int8) for _ in range(n)]
    out = module.graph.outputs[0]
    return inputs, [run_graph(module.graph, [x])[out] for x in inputs]


@pytest.mark.parametrize("target", ["c", "accel, c", "woofles, c", "cmsis-nn, c", "woofles, cmsis-nn, c"])
def test_one_executor_hammered_from_several_threads_is_bit_exact(registry, target):
    module = tvmdevice.compile(demo_model(), target, registry=_registry_for(target, registry))
    inputs, expected = _samples(module, 16)
    start = threading.Barrier(THREADS)

    def worker(seed: int) -> list[str]:
        order = np.random.default_rng(seed).integers(0, len(inputs), RUNS)
        start.wait()
        wrong = []
        for i in order:
            (out,) = ex.run([inputs[i]])
            if not np.array_equal(out, expected[i]):
                wrong.append(f"thread {seed}: input {i} gave a wrong result")
        return wrong

    with module.executor() as ex, ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(worker, range(THREADS)))
        assert all(d.state is State.OPENED for d in ex.devices)
    assert [w for r in results for w in r] == []
    assert all(d.state is State.UNINITIALIZED and not d.allocations for d in ex.devices)


def test_a_second_run_waits_for_the_first(registry):
    """A run blocked inside a kernel holds the executor: the other thread's run starts after it."""
    accel = load_fixture_module("fixture_accel")
    registry.register(accel, "accel")
    module = tvmdevice.compile(demo_model(), "accel, c", registry=registry)
    inputs, expected = _samples(module, 2)
    inside, release = threading.Event(), threading.Event()
    events: list[str] = []
    original = module.prepared[0].kernel

    def slow_kernel(params, buffers, device):
        if not inside.is_set():
            inside.set()
            release.wait(10)
        original(params, buffers, device)

    prepared = module.prepared[0]
    module.prepared[0] = type(prepared)(prepared.name, slow_kernel, prepared.params, prepared.scratch_bytes)
    with module.executor() as ex:
        def first():
            events.append("first starts")
            out = ex.run([inputs[0]])
            events.append("first done")
            return out

        def second():
            inside.wait(10)
            events.append("second starts")
            out = ex.run([inputs[1]])
            events.append("second done")
            return out

        with ThreadPoolExecutor(2) as pool:
            a, b = pool.submit(first), pool.submit(second)
            inside.wait(10)
            while "second starts" not in events:
                threading.Event().wait(0.001)
            threading.Event().wait(0.05)  # the second run is now waiting for the lock
            assert "second done" not in events
            release.set()
            assert np.array_equal(a.result()[0], expected[0]) and np.array_equal(b.result()[0], expected[1])
    assert events.index("first done") < events.index("second done")


def test_close_waits_for_a_run_and_later_runs_are_refused(registry):
    module = tvmdevice.compile(demo_model(), "c", registry=registry)
    inputs, expected = _samples(module, 4)
    ex = module.executor()

    def runner() -> tuple[int, LifecycleError]:
        """Run until the executor refuses; every result before that is checked."""
        done = 0
        while True:
            try:
                (out,) = ex.run([inputs[done % 4]])
            except LifecycleError as exc:
                return done, exc
            assert np.array_equal(out, expected[done % 4])
            done += 1

    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(runner) for _ in range(4)]
        threading.Event().wait(0.05)
        ex.close()
        results = [f.result(timeout=30) for f in futures]
    assert all("executor is closed" in str(exc) for _, exc in results)
    assert sum(done for done, _ in results) > 0
    assert all(d.state is State.UNINITIALIZED and not d.allocations for d in ex.devices)


def test_calling_back_into_the_executor_from_its_own_kernel_is_refused(registry):
    accel = load_fixture_module("fixture_accel")
    registry.register(accel, "accel")
    module = tvmdevice.compile(demo_model(), "accel, c", registry=registry)
    inputs, _ = _samples(module, 1)
    prepared = module.prepared[0]
    seen: list[BaseException] = []

    def reentrant(params, buffers, device):
        try:
            ex.run(inputs)
        except LifecycleError as exc:
            seen.append(exc)
        prepared.kernel(params, buffers, device)

    module.prepared[0] = type(prepared)(prepared.name, reentrant, prepared.params, prepared.scratch_bytes)
    with module.executor() as ex:
        ex.run(inputs)
    assert len(seen) == 1 and "called from inside this executor's own run" in str(seen[0])


def test_one_executor_per_thread_on_the_host_device_runs_in_parallel(registry):
    """What the README promises for ``c``: separate executors of one module do not interfere."""
    module = tvmdevice.compile(demo_model(), "c", registry=registry)
    inputs, expected = _samples(module, 8)
    start = threading.Barrier(4)

    def own_executor(seed: int) -> int:
        wrong = 0
        with module.executor() as ex:
            start.wait()
            for i in np.random.default_rng(seed).integers(0, len(inputs), RUNS):
                wrong += not np.array_equal(ex.run([inputs[i]])[0], expected[i])
        return wrong

    with ThreadPoolExecutor(4) as pool:
        assert sum(pool.map(own_executor, range(4))) == 0


@pytest.mark.parametrize("target", ["c", "cmsis-nn, c"])
def test_threads_sharing_an_executor_with_out_arrays_each_get_their_own_result(registry, target):
    """``run(out=)`` from several threads on one executor: each thread's arrays hold its own sample's output."""
    module = tvmdevice.compile(demo_model(), target, registry=_registry_for(target, registry))
    inputs, expected = _samples(module, 16)
    start = threading.Barrier(THREADS)

    def worker(seed: int) -> list[str]:
        out = np.empty_like(expected[0])
        start.wait()
        wrong = []
        for i in np.random.default_rng(seed).integers(0, len(inputs), RUNS):
            (got,) = ex.run([inputs[i]], out=[out])
            if got is not out or not np.array_equal(out, expected[i]):
                wrong.append(f"thread {seed}: input {i} gave a wrong result")
        return wrong

    with module.executor() as ex, ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(worker, range(THREADS)))
    assert [w for r in results for w in r] == []


@pytest.mark.parametrize("target", ["c", "cmsis-nn, c"])
def test_threads_mixing_run_and_run_batch_on_one_executor_are_bit_exact(registry, target):
    """``run_batch`` (with and without workers) holds the executor per chunk: a concurrent ``run`` never
    sees a half-written arena, and every batch equals its samples run one by one."""
    module = tvmdevice.compile(demo_model(), target, registry=_registry_for(target, registry))
    inputs, expected = _samples(module, 16)
    stacked, stacked_expected = np.stack(inputs), np.stack(expected)
    start = threading.Barrier(4)

    def batcher(workers: int | None) -> bool:
        start.wait()
        return all(np.array_equal(ex.run_batch([stacked], workers=workers)[0], stacked_expected) for _ in range(5))

    def runner(seed: int) -> bool:
        start.wait()
        return all(np.array_equal(ex.run([inputs[i]])[0], expected[i])
                   for i in np.random.default_rng(seed).integers(0, len(inputs), RUNS))

    with module.executor() as ex, ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(batcher, None), pool.submit(batcher, 2), pool.submit(runner, 1),
                   pool.submit(runner, 2)]
        assert all(f.result() for f in futures)


def test_executors_that_release_the_gil_run_in_parallel_and_stay_bit_exact(registry):
    """One ``release_gil`` executor per thread (what ``run_batch`` workers are): the C run loops overlap."""
    module = tvmdevice.compile(demo_model(), "cmsis-nn, c", registry=_registry_for("cmsis-nn, c", registry))
    inputs, expected = _samples(module, 8)
    start = threading.Barrier(4)

    def own_executor(seed: int) -> int:
        wrong = 0
        with Executor(module, release_gil=True) as ex:
            assert ex.runs_in_c
            start.wait()
            for i in np.random.default_rng(seed).integers(0, len(inputs), RUNS):
                wrong += not np.array_equal(ex.run([inputs[i]])[0], expected[i])
        return wrong

    with ThreadPoolExecutor(4) as pool:
        assert sum(pool.map(own_executor, range(4))) == 0


def test_run_batch_keeps_its_workers_and_grows_its_threads_only_when_asked_for_more(registry):
    """The batch runner counts the threads it made (never reading the pool's private size): more workers
    than before replace the pool, fewer reuse it; the worker executors only ever grow, and every batch is
    bit-exact with its samples run one by one."""
    module = tvmdevice.compile(demo_model(), "cmsis-nn, c", registry=_registry_for("cmsis-nn, c", registry))
    inputs, expected = _samples(module, 8)
    stacked, stacked_expected = np.stack(inputs), np.stack(expected)
    with module.executor() as ex:
        assert ex.runs_in_c  # only a run done in C is split over workers
        batch = ex._batch
        assert np.array_equal(ex.run_batch([stacked], workers=2)[0], stacked_expected)
        first = batch._threads
        assert len(batch.workers) == 1 and batch._thread_count == 1 and first is not None
        assert np.array_equal(ex.run_batch([stacked], workers=4)[0], stacked_expected)
        second = batch._threads
        assert len(batch.workers) == 3 and batch._thread_count == 3 and second is not first
        assert np.array_equal(ex.run_batch([stacked], workers=3)[0], stacked_expected)
        assert batch._threads is second and len(batch.workers) == 3
        workers = list(batch.workers)
    assert all(w.closed for w in workers) and batch._threads is None and batch.workers == []


@pytest.mark.parametrize("target", ["cmsis-nn, c", "accel, c"])
def test_invoke_runs_the_inputs_in_place_waits_for_the_lock_and_refuses_a_closed_executor(registry, target):
    """invoke(): the C path (cmsis-nn) and the Python path (a Python plugin) give the run's outputs, wait while
    another thread holds the lock, and raise on a closed executor."""
    module = tvmdevice.compile(demo_model(), target, registry=_registry_for(target, registry))
    inputs, expected = _samples(module, 2)
    ex = module.executor()
    assert ex.runs_in_c is (target == "cmsis-nn, c")
    ex.set_inputs([inputs[1]])
    ex.invoke()
    assert np.array_equal(ex.tensor(module.graph.outputs[0]), expected[1])
    ex.set_inputs([inputs[0]])
    ex._lock.lock.acquire()  # another thread's run in progress
    done = threading.Event()
    waiter = threading.Thread(target=lambda: (ex.invoke(), done.set()))
    waiter.start()
    assert not done.wait(0.2), "invoke() ran while the lock was held"
    ex._lock.lock.release()
    waiter.join(10)
    assert done.is_set() and np.array_equal(ex.tensor(module.graph.outputs[0]), expected[0])
    assert ex._lock.holder is None and not ex._lock.lock.locked()
    ex.close()
    with pytest.raises(LifecycleError, match=r"invoke\(\): executor is closed"):
        ex.invoke()


def test_the_run_mutex_is_a_lock_that_waits_and_refuses_a_release_it_does_not_hold():
    """RunMutex, the executor's lock (taken from C by the run): acquire/release/locked/with as threading.Lock."""
    from tvmdevice.aot._runloop import RunMutex

    mutex = RunMutex()
    assert not mutex.locked() and mutex.acquire(False) and mutex.locked()
    assert not mutex.acquire(False), "a second acquire of a held lock succeeded"
    taken = threading.Event()
    waiter = threading.Thread(target=lambda: (mutex.acquire(), taken.set(), mutex.release()))
    waiter.start()
    assert not taken.wait(0.1), "a blocking acquire did not wait for the holder"
    mutex.release()
    waiter.join(10)
    assert taken.is_set() and not mutex.locked()
    with pytest.raises(RuntimeError, match="release unlocked lock"):
        mutex.release()
    with mutex:
        assert mutex.locked()
    assert not mutex.locked()


def test_the_c_run_declines_while_the_lock_is_busy_and_after_close(registry):
    """The hot path's C call (CRun.run_locked / invoke_locked) does nothing when another thread holds the
    lock, or when the executor was closed after the run read it — the slow path then waits or explains."""
    module = tvmdevice.compile(demo_model(), "cmsis-nn, c", registry=_registry_for("cmsis-nn, c", registry))
    inputs, expected = _samples(module, 1)
    ex = module.executor()
    crun = ex._crun
    assert np.array_equal(crun.run_locked([inputs[0]])[0], expected[0]) and not ex._lock.lock.locked()
    assert crun.invoke_locked() is None and not ex._lock.lock.locked()
    ex._lock.lock.acquire()  # another thread's run in progress
    assert crun.run_locked([inputs[0]]) is None and crun.invoke_locked() is False
    assert ex._lock.lock.locked(), "a declined C run released a lock it did not take"
    ex._lock.lock.release()
    ex.close()
    assert crun.run_locked([inputs[0]]) is None and crun.invoke_locked() is False
    assert not ex._lock.lock.locked()
    with pytest.raises(LifecycleError, match=r"run\(\): executor is closed"):
        ex.run([inputs[0]])


def test_a_blocking_wait_for_the_run_mutex_is_interruptible():
    """Ctrl-C while waiting for another thread's run raises KeyboardInterrupt, as threading.Lock's wait does."""
    import _thread

    from tvmdevice.aot._runloop import RunMutex

    mutex = RunMutex()
    mutex.acquire()
    timer = threading.Timer(0.1, _thread.interrupt_main)
    # were the wait deaf to Ctrl-C, this release would end it after 5 s and the test fail rather than hang
    watchdog = threading.Timer(5.0, mutex.release)
    timer.start()
    watchdog.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            mutex.acquire()
    finally:
        timer.cancel()
        watchdog.cancel()
    assert mutex.locked()
    mutex.release()
    assert not mutex.locked()
