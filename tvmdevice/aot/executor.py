"""The executor: the device lifecycle around a bound plan.

Lifecycle, as the C Device API prescribes:

* creating an :class:`Executor` Inits and Opens every device of the target,
  then binds the plan to them (:class:`~tvmdevice.aot.bind.BoundPlan`:
  storage as planned, scratch included, constants preloaded into separate
  device memory); if any of that fails, everything is torn down before the
  error is raised;
* :meth:`Executor.run` Activates the devices, issues the calls — each with its
  device's handle as the last argument (``resource_handle``) — and copies,
  then Deactivates them, also when a kernel fails;
* :meth:`Executor.close` (or leaving the ``with`` block) frees everything and
  Closes and Destroys the devices.

Teardown cannot leak (:mod:`tvmdevice.teardown`): closing runs every free and
every lifecycle step even after one failed, holds Ctrl-C back until every
device is uninitialized, then raises what failed — one error as itself,
several as a :class:`~tvmdevice.errors.TeardownError`.  An error raised while
tearing down after a failure never masks that failure: the original error is
raised, with the teardown error attached (:func:`attach_cleanup_error`).

Threads: one executor may be shared; its runs are serialized by a lock
(see :class:`Executor`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..device_type import MemoryKind
from ..errors import InvalidArgumentError, LifecycleError, TVMDeviceError
from ..lifecycle import State
from ..teardown import Steps, attach_cleanup_error, deferred_interrupts
from .bind import BoundPlan, CallRecord

if TYPE_CHECKING:  # pragma: no cover
    from ..device import Device
    from .compiler import CompiledModule

__all__ = ["Executor", "CallRecord", "StepTiming", "attach_cleanup_error"]


@dataclass(frozen=True)
class StepTiming:
    step: int
    label: str
    device: str
    ns: int


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
    thread-safe: only its executor should call it.
    """

    def __init__(self, module: "CompiledModule", *, trace: bool | None = None, timeline: Any = None) -> None:
        self.module = module
        self.timeline = timeline
        self.graph = module.graph
        self.devices: list[Device] = []
        self._closed = False
        self._lock = threading.Lock()
        self._holder: int | None = None  # thread ident of the call holding the lock
        try:
            self.devices = module.target.create_devices(module.registry, trace=trace)
            for dev in self.devices:
                dev.init()
                dev.open()
            self.bound = BoundPlan(module, self.devices)
        except BaseException as exc:
            self._closed = True
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

    @contextmanager
    def _exclusive(self, what: str) -> Iterator[None]:
        """Hold the executor's lock for ``what``; refuse a re-entrant call instead of deadlocking."""
        me = threading.get_ident()
        if self._holder == me:  # only this thread ever sets it to its own ident: no race
            raise LifecycleError(f"{what} was called from inside this executor's own run (a kernel or hook "
                                 f"calling back into the executor); call it after the run returns")
        with self._lock:
            self._holder = me
            try:
                yield
            finally:
                self._holder = None

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
        with self._exclusive("set_inputs()"):
            self._check_open("set_inputs()")
            self._set_inputs(inputs)

    def _set_inputs(self, inputs: Sequence[np.ndarray]) -> None:
        arrays = self._check_inputs(inputs)
        for t, arr in zip(self.graph.inputs, arrays):
            self.bound.view(t)[...] = arr

    def _check_inputs(self, inputs: Any) -> list[np.ndarray]:
        """``inputs`` as one array per graph input, each of the input's dtype and exact shape."""
        expected = len(self.graph.inputs)
        usage = f"pass a list of {expected} numpy array(s), one per model input, e.g. run([x])"
        if inputs is None or isinstance(inputs, (np.ndarray, str, bytes, Mapping)) \
                or not isinstance(inputs, (Sequence, Iterator)):
            raise InvalidArgumentError(f"model {self.graph.name!r}: inputs must be a list of arrays, got "
                                       f"{type(inputs).__name__}; {usage}")
        values = list(inputs)
        if len(values) != expected:
            raise InvalidArgumentError(f"model {self.graph.name!r} takes {expected} input(s), "
                                       f"got {len(values)}; {usage}")
        arrays = []
        for k, (t, value) in enumerate(zip(self.graph.inputs, values)):
            tensor = self.graph.tensors[t]
            shape, dtype = tuple(tensor.shape), np.dtype(tensor.dtype)
            what = f"model {self.graph.name!r}: input {k} ({tensor.name!r})"
            try:
                arr = np.asarray(value)
            except (TypeError, ValueError) as exc:
                raise InvalidArgumentError(f"{what} is not an array ({type(exc).__name__}: {exc}); "
                                           f"pass a {dtype.name} array of shape {shape}") from None
            if arr.dtype != dtype:
                raise InvalidArgumentError(f"{what} must be {dtype.name}, got {arr.dtype.name}")
            # Exact shapes, no reshaping: a (1, 10, 49, 1) for a (1, 49, 10, 1)
            # input has the right size and the wrong meaning.
            if arr.shape != shape:
                raise InvalidArgumentError(f"{what} must have shape {shape}, got {arr.shape}")
            arrays.append(arr)
        return arrays

    def run(self, inputs: Sequence[np.ndarray], *, profile: bool = False) -> list[np.ndarray]:
        """Run the model once; returns copies of the outputs.

        Thread-safe: runs on one executor are serialized (see :class:`Executor`).

        :param inputs: one array per graph input, of its dtype and exactly its shape.
        :param profile: time each step; read the result from :attr:`timings`.
        :raises InvalidArgumentError: bad inputs (see :meth:`set_inputs`).
        :raises LifecycleError: the executor is closed.
        :raises KernelError: a kernel failed; the message names the operator and device.
        """
        with self._exclusive("run()"):
            self._check_open("run()")
            self._set_inputs(inputs)
            self._invoke(profile)
            return [np.array(self.bound.view(t)) for t in self.graph.outputs]

    def invoke(self, *, profile: bool = False) -> None:
        """Run the plan on the inputs already in place (the timed part of :meth:`run`)."""
        with self._exclusive("invoke()"):
            self._check_open("invoke()")
            self._invoke(profile)

    def _invoke(self, profile: bool) -> None:
        activated: list[Device] = []
        try:
            for dev in self.devices:
                dev.activate()
                activated.append(dev)
            if profile or self.timeline is not None:
                self._run_profiled()
            else:
                self.bound.loop.run()
        except BaseException as exc:
            for cleanup in _deactivate(activated).errors:
                attach_cleanup_error(exc, cleanup)
            raise
        _deactivate(activated).raise_errors()

    def _run_profiled(self) -> None:
        self.timings: list[StepTiming] = []
        for i, (label, device) in enumerate(self.labels):
            start = time.perf_counter_ns()
            self.bound.loop.run(i, i + 1)
            ns = time.perf_counter_ns() - start
            self.timings.append(StepTiming(i, label, device, ns))
            if self.timeline is not None:
                cat = "copy" if label.startswith("copy") else "kernel"
                self.timeline.add_span(label, cat, start, ns, device=device)

    def reset_state(self) -> None:
        """Reset the model's operator state (TFLite variable tensors: an LSTM's hidden and cell state, an
        SVDF's memory) to its initial value, as TFLM's ``ResetVariableTensors`` does.

        State persists from one :meth:`run` to the next (a sequence fed one frame per run); a new
        executor starts from the reset state.  Call this between independent sequences.

        :raises LifecycleError: the executor is closed.
        """
        with self._exclusive("reset_state()"):
            self._check_open("reset_state()")
            self.bound.reset_state()

    def tensor(self, index: int) -> np.ndarray:
        """A copy of tensor ``index`` after a run (constants, host tensors, or device tensors)."""
        with self._exclusive("tensor()"):
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
        with self._exclusive("close()"):
            self._closed = True
            self._teardown()

    def _teardown(self) -> None:
        """Free what binding allocated and walk every device down, whatever fails on the way."""
        with deferred_interrupts():
            steps = Steps("closing the executor")
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


def _deactivate(activated: list["Device"]) -> Steps:
    """Deactivate ``activated`` in reverse, every one even if another fails; the errors are kept."""
    steps = Steps("deactivating after a run")
    for dev in reversed(activated):
        steps.run(dev.deactivate)
    return steps
