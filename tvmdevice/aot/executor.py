"""The executor: the device lifecycle around a bound plan.

Lifecycle, as the C Device API prescribes:

* creating an :class:`Executor` Inits and Opens every device of the target,
  then binds the plan to them (:class:`~tvmdevice.aot.bind.BoundPlan`:
  storage as planned, scratch included, constants preloaded into separate
  device memory); if any of that fails, everything is torn down before the
  error is raised;
* :meth:`Executor.run` Activates the devices, issues the calls — each with its
  device's handle as the last argument (``resource_handle``) — and copies,
  then Deactivates them, also when a kernel fails.  The host device is cycled
  only when it runs a step.  When every step is a C kernel and every cycled
  device's lifecycle is C, the whole run — inputs in, Activate, kernels,
  Deactivate, outputs out — is one call into C, the state machine checked
  once before it and put where the hooks would have left it after a failure
  (see docs/runpath.md);
* :meth:`Executor.close` (or leaving the ``with`` block) frees everything and
  Closes and Destroys the devices.

Teardown cannot leak (:mod:`tvmdevice.teardown`): closing runs every free and
every lifecycle step even after one failed, holds Ctrl-C back until every
device is uninitialized, then raises what failed — one error as itself,
several as a :class:`~tvmdevice.errors.TeardownError`.  An error raised while
tearing down after a failure never masks that failure: the original error is
raised, with the teardown error attached (:func:`attach_cleanup_error`).

Threads: one executor may be shared; its runs are serialized by a lock
(:mod:`tvmdevice.aot.run_lock`, see :class:`Executor`);
:meth:`Executor.run_batch` runs a stacked batch, optionally on worker
executors whose C run loop releases the GIL (:mod:`tvmdevice.aot.batch`).

The checks of a caller's arguments are :mod:`tvmdevice.aot.io_checks`, a
profiled run is :mod:`tvmdevice.aot.profiling`, and a run done in C answers
through :mod:`tvmdevice.aot.c_run`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..device_type import MemoryKind
from ..errors import LifecycleError, TVMDeviceError
from ..lifecycle import State, Transition
from ..plugin_support import c_step, status_error
from ..teardown import Steps, attach_cleanup_error, deferred_interrupts
from ._runloop import ACTIVATE_FAILED, STEP_FAILED, CRun, Ports
from .batch import BatchRunner
from .bind import BoundPlan, CallRecord
from .c_run import CycleStop, Ran, batch_in_c, invoke_in_c
from .io_checks import check_inputs, check_out
from .profiling import StepTiming, run_profiled
from .run_lock import RunLock

if TYPE_CHECKING:  # pragma: no cover
    from ..device import Device
    from .compiler import CompiledModule

__all__ = ["Executor", "CallRecord", "StepTiming", "attach_cleanup_error"]


class Executor:
    """Runs a :class:`~tvmdevice.aot.compiler.CompiledModule`; see the module docstring.

    **Threads.**  An executor is safe to share between threads: :meth:`run`,
    :meth:`set_inputs`, :meth:`invoke`, :meth:`tensor` and :meth:`close`
    each hold the executor's lock, so runs on one executor are serialized —
    a second thread's ``run`` waits for the first to finish, and every run
    sees only its own inputs.  ``set_inputs`` followed by ``invoke`` is two
    calls, though: another thread's run may come in between, so threads
    that share an executor should call :meth:`run`.  Attributes describing
    the last run (``timings``) belong to whichever run finished last.
    Calling the executor again from inside one of its own kernels is a
    :class:`~tvmdevice.errors.LifecycleError`, not a deadlock.  Separate
    executors hold separate devices and memory; whether two of them may run
    at the same time is up to their plugins (the built-in ``c`` device
    allows it).  A :class:`~tvmdevice.device.Device` itself is not
    thread-safe: only its executor should call it.  An array passed as
    ``out=`` must not be read or written by another thread while the run
    that fills it is in progress.

    :param release_gil: release the GIL while the C run loop runs (only when
        :attr:`runs_in_c`), so that other threads — typically other
        executors, as :meth:`run_batch`'s workers are — run meanwhile.  Costs
        a GIL hand-over per run: worth it for models whose kernels take more
        than a few microseconds.
    """

    def __init__(self, module: "CompiledModule", *, trace: bool | None = None, timeline: Any = None,
                 release_gil: bool = False) -> None:
        self.module = module
        self.timeline = timeline
        self.graph = module.graph
        self.devices: list[Device] = []
        self._closed = False
        self._lock = RunLock()
        self._release_gil = bool(release_gil)
        # run_batch, with its worker executors (closed with this one)
        self._batch = BatchRunner(self, lambda: Executor(module, release_gil=True))
        self._crun: CRun | None = None  # the run in C, when the plan allows it (_prepare_run_path)
        try:
            self.devices = module.target.create_devices(module.registry, trace=trace)
            for dev in self.devices:
                dev.init()
                dev.open()
            self.bound = BoundPlan(module, self.devices)
            self._prepare_run_path()
        except BaseException as exc:
            self._closed = True
            self._crun = None
            try:
                self._teardown()
            except BaseException as cleanup:  # noqa: BLE001 - the original error is the one to report
                attach_cleanup_error(exc, cleanup)
            raise

    @property
    def calls(self) -> list[CallRecord]:
        """A :class:`CallRecord` per kernel call issued by :meth:`run`, in order."""
        return self.bound.calls

    @property
    def labels(self) -> list[tuple[str, str]]:
        """``(label, device)`` per step, in order."""
        return self.bound.labels

    def _prepare_run_path(self) -> None:
        """Everything a run needs that does not change between runs, computed once.

        * the inputs' arena views with their shapes and dtypes (the input check compares tuples), and
          the outputs' views;
        * the devices a run cycles: every accelerator, and the host device only when it runs a step (a
          kernel or a copy) — under an accelerator that runs every operator it is not activated;
        * whether the run loop may do the whole run in C (:meth:`RunLoop.cycle`): every step a C
          kernel, every cycled device's Activate and Deactivate a C function
          (:class:`~tvmdevice.plugin.CLifecycle`) reached directly — not traced, not wrapped.
        """
        bound, graph = self.bound, self.graph
        self._in_ports = tuple((bound.view(t), tuple(graph.tensors[t].shape), np.dtype(graph.tensors[t].dtype))
                               for t in graph.inputs)
        self._out_views = tuple(bound.view(t) for t in graph.outputs)
        self._ports = Ports([view for view, _, _ in self._in_ports], self._out_views)
        used = {device for _, device in bound.labels}
        host = self.devices[-1]  # a target's host is its last device
        self._cycled = [dev for dev in self.devices if dev is not host or dev.name in used]
        self._c_symbols: list[tuple[str, str]] = []
        self._c_run = False
        self._crun = None
        if not bound.loop.pure_c:
            return
        table = []
        for dev in self._cycled:
            up = c_step(dev._binding.hook("tvmdevice_activate"), dev)
            down = c_step(dev._binding.hook("tvmdevice_deactivate"), dev)
            if up is None or down is None:
                return
            table.append((up[0], down[0], dev.handle_address))
            self._c_symbols.append((up[1], down[1]))
        bound.loop.set_devices(table)
        self._c_run = True
        self._crun = CRun(self._ports, bound.loop, self._cycled, State.OPENED, self._release_gil,
                          self._lock.lock)

    @property
    def runs_in_c(self) -> bool:
        """True when a run (without ``profile``/``timeline``) is done in C: lifecycle calls and kernels,
        no Python between them (see :meth:`run`)."""
        return self._c_run

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise LifecycleError(f"{what}: executor is closed; create a new one with module.executor()")

    # ------------------------------------------------------------------- run
    def set_inputs(self, inputs: Sequence[np.ndarray]) -> None:
        """Copy ``inputs`` into the arena: one array per graph input, of its dtype and exactly its shape.

        :raises InvalidArgumentError: not a list of arrays, the wrong number, dtype or shape
            (the message names the input, what it expects and what it got).
        :raises LifecycleError: the executor is closed.
        """
        with self._lock.exclusive("set_inputs()"):
            self._check_open("set_inputs()")
            self._set_inputs(inputs)

    def _set_inputs(self, inputs: Sequence[np.ndarray]) -> None:
        # The common case (C-contiguous arrays of the exact shapes and dtypes) is checked against the
        # cached tuples and copied in C; anything else goes through the full check, which explains
        # what is wrong, and a numpy copy.
        if not self._ports.load(inputs):
            for arr, (view, _, _) in zip(check_inputs(self.graph, inputs), self._in_ports):
                np.copyto(view, arr)

    def run(self, inputs: Sequence[np.ndarray], *, out: Sequence[np.ndarray] | None = None,
            profile: bool = False) -> list[np.ndarray]:
        """Run the model once; returns the outputs (new arrays, or the arrays of ``out``).

        Thread-safe: runs on one executor are serialized (see :class:`Executor`).

        :param inputs: one array per graph input, of its dtype and exactly its shape.
        :param out: optional, one writable array per graph output, of its dtype and exactly its shape:
            the outputs are written into them (no new array) and they are returned.  Checked before the
            run, so a bad ``out`` leaves the model's state (LSTM, SVDF) untouched.
        :param profile: time each step; read the result from :attr:`timings`.
        :raises InvalidArgumentError: bad inputs (see :meth:`set_inputs`) or a bad ``out`` (the message names
            the output, what it expects and what it got).
        :raises LifecycleError: the executor is closed.
        :raises KernelError: a kernel failed; the message names the operator and device.
        """
        # The hot path: one call into C (CRun.run_locked) that takes the lock without waiting, checks the
        # inputs, out and the devices' state against cached values and does the whole run — or declines
        # without touching anything (lock busy, executor closed, anything unusual), and _run_slow explains
        # or handles it.  No Python runs inside that call, so nothing can call back into the executor:
        # the lock's holder is not needed there.
        crun = self._crun
        if crun is not None and not profile and self.timeline is None:
            done = crun.run_locked(inputs, out)  # the outputs, None (declined) or where it stopped (locked)
            if type(done) is list:
                return done
            if done is not None:
                self._stopped_locked(done)
        return self._run_slow(inputs, out, profile)

    def _stopped_locked(self, stop: tuple) -> None:
        """Raise what a run stopped by a failing status in C raises; the lock is held (by the C call that
        stopped) and released here."""
        run_lock = self._lock
        run_lock.holder = _get_ident()
        try:
            self._cycle_failed(CycleStop(*stop))
        finally:
            run_lock.holder = None
            run_lock.lock.release()

    def _run_slow(self, inputs: Sequence[np.ndarray], out: Sequence[np.ndarray] | None,
                  profile: bool) -> list[np.ndarray]:
        """:meth:`run` when its hot path declined: the lock taken (waiting for it, refusing a re-entrant call)."""
        run_lock = self._lock
        lock = run_lock.lock
        if not lock.acquire(False):
            run_lock.wait("run()")
        try:
            crun = self._crun
            if crun is not None and not profile and self.timeline is None:
                done = crun.run(inputs, out)  # the outputs, None (declined: nothing done) or where it stopped
                if type(done) is list:
                    return done
                run_lock.holder = _get_ident()
                if done is not None:
                    self._cycle_failed(CycleStop(*done))
            run_lock.holder = _get_ident()
            if self._closed:
                self._check_open("run()")
            return self._run_one(inputs, out, profile)
        finally:
            run_lock.holder = None
            lock.release()

    def _run_one(self, inputs: Sequence[np.ndarray], out: Sequence[np.ndarray] | None,
                 profile: bool) -> list[np.ndarray]:
        """One run, the lock held and the executor open."""
        ports = self._ports
        if out is not None and not ports.fits_out(out):
            out = check_out(self.graph, out, self._out_views)
        self._set_inputs(inputs)
        crun = self._crun
        if crun is not None and not profile and self.timeline is None:
            # The state machine checked once per run (CRun.ready_to_run): a device that is not opened
            # and healthy (a failed earlier run left it faulted, someone activated it by hand) takes the
            # Python path, which refuses it with the usual LifecycleError.  On the C path the devices'
            # Python state is not touched: they go opened -> active -> opened inside one call, under
            # this executor's lock, and come back opened unless a status says otherwise.
            done = invoke_in_c(crun)
            if done.ran is Ran.DECLINED:
                self._invoke(False)
            elif done.stop is not None:
                self._cycle_failed(done.stop)
        else:
            self._invoke(profile)
        if out is None:
            return ports.outputs()
        if not ports.store(out):
            for arr, view in zip(out, self._out_views):
                np.copyto(arr, view)
        return list(out)

    def _cycle_failed(self, stop: CycleStop) -> None:
        """Make the devices' state what it is after :meth:`RunLoop.cycle` stopped, raise what the hooks
        would have raised, and deactivate what is still active — exactly as :meth:`_invoke` does."""
        phase, index, status = stop.phase, stop.index, stop.status
        devices = self._cycled
        if phase == ACTIVATE_FAILED or phase == STEP_FAILED:
            activated = devices[:index] if phase == ACTIVATE_FAILED else devices
            for dev in activated:
                dev.state = State.ACTIVE
            try:
                if phase == ACTIVATE_FAILED:
                    dev = devices[index]
                    _raise_failed(dev, Transition.ACTIVATE, status_error(status, dev.name, self._c_symbols[index][0]))
                raise self.bound._kernel_failed(index, status)
            except BaseException as exc:
                for cleanup in _deactivate(activated).errors:
                    attach_cleanup_error(exc, cleanup)
                raise
        # Deactivate failed at device `index`: the ones after it are down, the ones before still active.
        for dev in devices[:index]:
            dev.state = State.ACTIVE
        dev = devices[index]
        steps = Steps("deactivating after a run")
        steps.run(_raise_failed, dev, Transition.DEACTIVATE, status_error(status, dev.name, self._c_symbols[index][1]))
        for dev in reversed(devices[:index]):
            steps.run(dev.deactivate)
        steps.raise_errors()

    def run_batch(self, inputs: Sequence[np.ndarray], *, workers: int | None = None,
                  out: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
        """Run the model once per sample of a stacked batch; returns the outputs stacked the same way.

        ``inputs[k][i]`` is sample ``i`` of model input ``k`` (each array is ``(N, *input_shape)``), and
        output ``k`` comes back as one ``(N, *output_shape)`` array whose ``[i]`` is sample ``i``'s.
        Each sample is one :meth:`run`: results are bit-exact with running them one by one.

        :param workers: ``None`` or 1 runs the samples in order on this executor.  ``n > 1`` splits the
            batch into ``n`` contiguous chunks run on a thread pool, each chunk on its own executor (this
            one and ``n - 1`` more, created on first use and kept until :meth:`close`).  Those extra
            executors release the GIL while their C run loop runs, so the chunks run in parallel.  Only
            a plan that :attr:`runs_in_c` is split: one with Python steps (a Python plugin, copies, host
            reference kernels) runs its samples in order on this executor, as it would hold the GIL
            anyway.  Refused for a model with operator state (LSTM, SVDF): its samples depend on each
            other.
        :param out: optional, one writable ``(N, *output_shape)`` array per output to write into.
        :raises InvalidArgumentError: not one ``(N, ...)`` array per input with the same ``N``, a bad
            ``out``, a bad ``workers``, or ``workers > 1`` on a stateful model.
        :raises LifecycleError: the executor is closed.
        """
        return self._batch.run(inputs, workers, out)

    def _run_samples(self, stacked: list[np.ndarray], out: Sequence[np.ndarray], start: int, stop: int) -> None:
        """Samples ``[start, stop)`` of a batch, the lock held once for all of them: all in C when the run
        :attr:`runs_in_c` (GIL released in a ``release_gil`` executor), else one :meth:`run` each."""
        self._lock.acquire("run_batch()")
        try:
            self._check_open("run_batch()")
            crun = self._crun
            if crun is not None and self.timeline is None:
                done = batch_in_c(crun, stacked, out, start, stop)
                if done.ran is Ran.DONE:
                    return
                if done.stop is not None:
                    self._cycle_failed(done.stop)
            for i in range(start, stop):
                self._run_one([x[i] for x in stacked], [o[i] for o in out], False)
        finally:
            self._lock.release()

    def invoke(self, *, profile: bool = False) -> None:
        """Run the plan on the inputs already in place (the timed part of :meth:`run`)."""
        # The hot path, as run()'s: one call into C that takes the lock without waiting and runs the plan,
        # or declines (nothing done) and _invoke_slow takes the lock, waiting, and explains or handles it.
        crun = self._crun
        if crun is not None and not profile and self.timeline is None:
            answer = crun.invoke_locked()  # None (done), False (declined) or where it stopped (locked)
            if answer is None:
                return
            if answer is not False:
                self._stopped_locked(answer)
        self._invoke_slow(profile)

    def _invoke_slow(self, profile: bool) -> None:
        """:meth:`invoke` when its hot path declined: the lock taken (waiting, refusing a re-entrant call)."""
        run_lock = self._lock
        lock = run_lock.lock
        if not lock.acquire(False):
            run_lock.wait("invoke()")
        try:
            run_lock.holder = _get_ident()
            self._check_open("invoke()")
            crun = self._crun
            if crun is not None and not profile and self.timeline is None:
                done = invoke_in_c(crun)
                if done.ran is Ran.DONE:
                    return
                if done.stop is not None:
                    self._cycle_failed(done.stop)
            self._invoke(profile)
        finally:
            run_lock.holder = None
            lock.release()

    def _invoke(self, profile: bool) -> None:
        activated: list[Device] = []
        try:
            for dev in self._cycled:
                dev.activate()
                activated.append(dev)
            if profile or self.timeline is not None:
                self.timings: list[StepTiming] = []
                run_profiled(self.bound.loop, self.labels, self.timings, self.timeline)
            else:
                self.bound.loop.run()
        except BaseException as exc:
            for cleanup in _deactivate(activated).errors:
                attach_cleanup_error(exc, cleanup)
            raise
        _deactivate(activated).raise_errors()

    def reset_state(self) -> None:
        """Reset the model's operator state (TFLite variable tensors: an LSTM's hidden and cell state, an
        SVDF's memory) to its initial value, as TFLM's ``ResetVariableTensors`` does.

        State persists from one :meth:`run` to the next (a sequence fed one frame per run); a new
        executor starts from the reset state.  Call this between independent sequences.

        :raises LifecycleError: the executor is closed.
        """
        with self._lock.exclusive("reset_state()"):
            self._check_open("reset_state()")
            self.bound.reset_state()

    def tensor(self, index: int) -> np.ndarray:
        """A copy of tensor ``index`` after a run (constants, host tensors, or device tensors)."""
        with self._lock.exclusive("tensor()"):
            self._check_open("tensor()")
            return self.bound.tensor(index)

    # --------------------------------------------------------------- closing
    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called (or creation failed)."""
        return self._closed

    def close(self) -> None:
        """Free every allocation, then Close and Destroy every device.

        Every step runs even after an earlier one failed; a block whose free
        failed stays tracked, so Close frees it again and reports it
        (:class:`~tvmdevice.errors.LeakWarning`).  A Ctrl-C is held back
        until every device is uninitialized, then raised.  Afterwards the
        errors are raised together: one as itself, several as a
        :class:`~tvmdevice.errors.TeardownError` (``.errors``, the first as
        the cause).  Idempotent: a second call does whatever is left (usually
        nothing) and raises nothing new.  Waits for a run in progress.
        """
        with self._lock.exclusive("close()"):
            self._closed = True
            if self._crun is not None:
                self._crun.retire()  # a run that read _crun before this declines once it has the lock
            self._crun = None
            self._teardown()

    def _teardown(self) -> None:
        """Free what binding allocated and walk every device down, whatever fails on the way."""
        with deferred_interrupts():
            steps = Steps("closing the executor")
            self._batch.close(steps)
            for dev in reversed(self.devices):
                for ptr, alloc in list(dev.allocations.items()):
                    steps.run(dev.free_workspace if alloc.kind == "workspace" else dev.free_data_space, ptr)
                if dev.state is not State.UNINITIALIZED:
                    steps.run(dev.release)
            steps.raise_errors()

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None:
            self.close()
            return
        try:
            self.close()
        except Exception as cleanup:  # noqa: BLE001 - the error that ended the block is the one to report
            attach_cleanup_error(exc, cleanup)

    def check_plan(self) -> None:
        """Verify every call carries exactly the device that owns its kernel.

        :raises TVMDeviceError: naming the operator whose call is inconsistent.
        """
        handles = {d.handle_address: d for d in self.devices}
        for rec in self.calls:
            placed = self.module.placement.ops[rec.op_index].device
            owner = handles.get(rec.resource_handle)
            if owner is None or owner.name != placed or rec.handle_owner != placed or rec.device != placed:
                raise TVMDeviceError(f"plan check: operator #{rec.op_index} is placed on {placed!r} but its call "
                                     f"carries the handle of {getattr(owner, 'name', None)!r}")
            if owner.memory is MemoryKind.SEPARATE:
                for addr in rec.buffers:
                    if addr is not None and owner.find_allocation(addr, 1) is None:
                        raise TVMDeviceError(f"plan check: operator #{rec.op_index} on {placed!r} reads {addr:#x}, "
                                             f"which is not in that device's memory")


_get_ident = threading.get_ident


def _raise_failed(dev: "Device", transition: Transition, error: BaseException) -> None:
    """Raise what ``dev``'s ``transition`` hook raises when its C function returned a non-zero status."""
    raise dev._transition_failed(transition, error) from error


def _deactivate(activated: list["Device"]) -> Steps:
    """Deactivate ``activated`` in reverse, every one even if another fails; the errors are kept."""
    steps = Steps("deactivating after a run")
    for dev in reversed(activated):
        steps.run(dev.deactivate)
    return steps
