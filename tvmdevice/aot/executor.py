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

An error raised while tearing down after a failure never masks that failure:
the original error is raised, with the teardown error attached
(:func:`attach_cleanup_error`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..device_type import MemoryKind
from ..errors import InvalidArgumentError, LifecycleError, TVMDeviceError
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


class Executor:
    """Runs a :class:`~tvmdevice.aot.compiler.CompiledModule`; see the module docstring."""

    def __init__(self, module: "CompiledModule", *, trace: bool | None = None, timeline: Any = None) -> None:
        self.module = module
        self.timeline = timeline
        self.graph = module.graph
        self.devices: list[Device] = []
        self._closed = False
        try:
            self.devices = module.target.create_devices(module.registry, trace=trace)
            for dev in self.devices:
                dev.init()
                dev.open()
            self.bound = BoundPlan(module, self.devices)
        except BaseException as exc:
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

    def _check_open(self) -> None:
        if self._closed:
            raise LifecycleError("executor is closed; create a new one with module.executor()")

    # ------------------------------------------------------------------- run
    def set_inputs(self, inputs: Sequence[np.ndarray]) -> None:
        """Copy ``inputs`` (one per graph input, right dtype and shape) into the arena."""
        if len(inputs) != len(self.graph.inputs):
            raise InvalidArgumentError(f"model {self.graph.name!r} takes {len(self.graph.inputs)} input(s), "
                                       f"got {len(inputs)}")
        for k, (t, value) in enumerate(zip(self.graph.inputs, inputs)):
            tensor = self.graph.tensors[t]
            arr = np.asarray(value)
            if arr.dtype != tensor.dtype:
                raise InvalidArgumentError(f"input {k} ({tensor.name!r}) must be {np.dtype(tensor.dtype).name}, "
                                           f"got {arr.dtype.name}")
            if arr.size != int(np.prod(tensor.shape)):
                raise InvalidArgumentError(f"input {k} ({tensor.name!r}) must have shape {tensor.shape}, "
                                           f"got {arr.shape}")
            self.bound.view(t)[...] = arr.reshape(tensor.shape)

    def run(self, inputs: Sequence[np.ndarray], *, profile: bool = False) -> list[np.ndarray]:
        """Run the model once; returns copies of the outputs.

        :param profile: time each step; read the result from :attr:`timings`.
        :raises KernelError: a kernel failed; the message names the operator and device.
        """
        self._check_open()
        self.set_inputs(inputs)
        self.invoke(profile=profile)
        return [np.array(self.bound.view(t)) for t in self.graph.outputs]

    def invoke(self, *, profile: bool = False) -> None:
        """Run the plan on the inputs already in place (the timed part of :meth:`run`)."""
        self._check_open()
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
            for cleanup in _walk(reversed(activated), "deactivate"):
                attach_cleanup_error(exc, cleanup)
            raise
        errors = _walk(reversed(activated), "deactivate")
        if errors:
            raise errors[0]

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

    def tensor(self, index: int) -> np.ndarray:
        """A copy of tensor ``index`` after a run (constants, host tensors, or device tensors)."""
        self._check_open()
        return self.bound.tensor(index)

    # --------------------------------------------------------------- closing
    def close(self) -> None:
        """Free every allocation, then Close and Destroy the devices (idempotent)."""
        if self._closed:
            return
        self._teardown()

    def _teardown(self) -> None:
        """Free what binding allocated and walk every device down; the first error is raised last."""
        self._closed = True
        first: BaseException | None = None
        for dev in reversed(self.devices):
            for ptr in list(dev.allocations):
                alloc = dev.allocations[ptr]
                try:
                    (dev.free_workspace if alloc.kind == "workspace" else dev.free_data_space)(ptr)
                except TVMDeviceError as exc:
                    first = first or exc
            try:
                dev.release()
            except TVMDeviceError as exc:
                first = first or exc
        if first is not None:
            raise first

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

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


def _walk(devices: Any, step: str) -> list[BaseException]:
    """Call ``step`` on each device, collecting (not raising) their errors."""
    errors: list[BaseException] = []
    for dev in devices:
        try:
            getattr(dev, step)()
        except TVMDeviceError as exc:
            errors.append(exc)
    return errors
