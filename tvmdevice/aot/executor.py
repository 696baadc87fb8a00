"""The executor: opens devices, preloads constants, runs the plan, closes devices.

Lifecycle, as the C Device API prescribes:

* creating an :class:`Executor` Inits and Opens every device of the target,
  allocates the planned storage (host arena, each device's blocks, scratch via
  AllocWorkspace) and preloads constants into separate device memory;
* :meth:`Executor.run` Activates the devices, issues the calls — each with its
  device's handle as the last argument (``resource_handle``) — and copies,
  then Deactivates them, also when a kernel fails;
* :meth:`Executor.close` (or leaving the ``with`` block) frees everything and
  Closes and Destroys the devices.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .._abi import kernel_info
from ..device_type import MemoryKind
from ..errors import InvalidArgumentError, KernelError, LifecycleError, TVMDeviceError, error_for_status
from ..kernel import is_c_kernel
from ..memory import address_of, aligned_empty
from ._runloop import RunLoop
from .ir import ABSENT
from .schedule import HOST, CopyStep, KernelStep

if TYPE_CHECKING:  # pragma: no cover
    from ..device import Device
    from .compiler import CompiledModule

__all__ = ["Executor", "CallRecord", "StepTiming"]


@dataclass(frozen=True)
class CallRecord:
    """One kernel call as issued: what the plan checker verifies.

    :ivar op_index: the operator.
    :ivar device: the device whose kernel runs it (from placement).
    :ivar resource_handle: the handle passed last: the device struct's address.
    :ivar handle_owner: the device that owns that handle.
    :ivar buffers: buffer addresses in kernel order (``None`` for absent inputs).
    """

    op_index: int
    device: str
    kernel: str
    resource_handle: int
    handle_owner: str
    buffers: tuple[int | None, ...]


@dataclass(frozen=True)
class StepTiming:
    step: int
    label: str
    device: str
    ns: int


@dataclass
class _Memory:
    device: "Device | None"  # None for the host arena
    blocks: list[int] = field(default_factory=list)


class Executor:
    """Runs a :class:`~tvmdevice.aot.compiler.CompiledModule`; see the module docstring."""

    def __init__(self, module: "CompiledModule", *, trace: bool | None = None, timeline: Any = None) -> None:
        self.module = module
        self.timeline = timeline
        self.graph = module.graph
        self.devices: list[Device] = []
        self.calls: list[CallRecord] = []
        self.labels: list[tuple[str, str]] = []
        self._keep: list[Any] = []
        self._const_ptrs: dict[tuple[int, str], int] = {}
        self._scratch: dict[str, int] = {}
        self._closed = False
        try:
            self._open(trace)
        except BaseException:
            self._teardown()
            raise

    # ---------------------------------------------------------------- set-up
    def _open(self, trace: bool | None) -> None:
        module = self.module
        self.devices = module.target.create_devices(module.registry, trace=trace)
        self._by_name = {d.name: d for d in self.devices}
        for dev in self.devices:
            dev.init()
            dev.open()
        host_pool = module.plan.pools[HOST]
        self.arena = aligned_empty(max(host_pool.size, 1), 64)
        self.memories: dict[str, _Memory] = {HOST: _Memory(None)}
        for name, pool in module.plan.pools.items():
            if name == HOST:
                continue
            dev = self._by_name[name]
            self.memories[name] = _Memory(dev, [dev.alloc_data_space(size, 64) for size in pool.blocks])
        for tensor, memory in module.schedule.constants:
            dev = self._by_name[memory]
            data = self.graph.tensors[tensor].data
            assert data is not None, "schedule.constants lists constant tensors only"
            ptr = dev.alloc_data_space(data.nbytes, 64, data.dtype.name)
            dev.upload(np.ascontiguousarray(data), ptr)
            self._const_ptrs[(tensor, memory)] = ptr
        for dev in self.devices:
            dev.stream_sync(0)
        for dev in self.devices:
            need = max((c.scratch_bytes for i, c in module.prepared.items()
                        if module.placement.ops[i].device == dev.name), default=0)
            if need:
                self._scratch[dev.name] = dev.alloc_workspace(need)
        self.loop = RunLoop(len(module.schedule.steps), self._kernel_failed)
        for step in module.schedule.steps:
            if isinstance(step, KernelStep):
                self._add_kernel(step)
            else:
                self._add_copy(step)

    def _address(self, tensor: int, memory: str) -> int:
        pool = self.module.plan.pools[memory]
        if memory == HOST:
            return address_of(self.arena) + pool.offsets[(tensor, memory)]
        return self.memories[memory].blocks[pool.block_of[(tensor, memory)]]

    def _view(self, tensor: int) -> np.ndarray:
        """The host-arena view of a non-constant tensor (typed and shaped)."""
        t = self.graph.tensors[tensor]
        off = self.module.plan.pools[HOST].offsets[(tensor, HOST)]
        return self.arena[off: off + t.nbytes].view(t.dtype).reshape(t.shape)

    def _add_kernel(self, step: KernelStep) -> None:
        op = self.graph.operators[step.op_index]
        call = self.module.prepared[op.index]
        dev = self.devices[step.entry]
        scratch = call.scratch_bytes
        self.labels.append((f"#{op.index} {op.type}", dev.name))
        if is_c_kernel(call.kernel):
            buffers: list[int | None] = []
            for t in op.inputs:
                if t == ABSENT:
                    buffers.append(None)
                elif self.graph.tensors[t].is_constant:
                    if step.memory == HOST:
                        data = self.graph.tensors[t].data
                        assert data is not None
                        self._keep.append(data)
                        buffers.append(address_of(data))
                    else:
                        buffers.append(self._const_ptrs[(t, step.memory)])
                else:
                    buffers.append(self._address(t, step.memory))
            buffers += [self._address(t, step.memory) for t in op.outputs]
            if scratch:
                buffers.append(self._scratch[dev.name])
            self.loop.add_kernel(call.kernel, call.params, buffers, dev.handle_address)
            self.calls.append(CallRecord(op.index, step.device, kernel_info(call.kernel)[0], dev.handle_address,
                                         dev.name, tuple(buffers)))
            return
        views: list[Any] = []
        for t in op.inputs:
            if t == ABSENT:
                views.append(None)
            elif self.graph.tensors[t].is_constant:
                views.append(self.graph.tensors[t].data)
            else:
                views.append(self._view(t))
        views += [self._view(t) for t in op.outputs]
        if scratch:
            buf = aligned_empty(scratch, 64)
            self._keep.append(buf)
            views.append(buf)
        kernel, params = call.kernel, call.params
        label = self.labels[-1][0]

        def run_python_kernel() -> None:
            try:
                kernel(params, views, dev)
            except TVMDeviceError:
                raise
            except Exception as exc:
                raise KernelError(f"operator {label} on device {dev.name!r} raised {type(exc).__name__}: "
                                  f"{exc}") from exc

        self.loop.add_python(run_python_kernel)
        self.calls.append(CallRecord(op.index, step.device, call.name, dev.handle_address, dev.name,
                                     tuple(address_of(v) if v is not None else None for v in views)))

    def _add_copy(self, step: CopyStep) -> None:
        t = self.graph.tensors[step.tensor]
        self.labels.append((f"copy t{step.tensor} {step.src}->{step.dst}", step.dst if step.dst != HOST else step.src))
        src_dev = self.memories[step.src].device
        dst_dev = self.memories[step.dst].device
        src = self._view(step.tensor).reshape(-1).view(np.uint8) if step.src == HOST else \
            self._address(step.tensor, step.src)
        dst = self._view(step.tensor).reshape(-1).view(np.uint8) if step.dst == HOST else \
            self._address(step.tensor, step.dst)
        performer = dst_dev if dst_dev is not None else src_dev
        assert performer is not None, "host-to-host copies are never scheduled"
        nbytes = t.nbytes

        def run_copy() -> None:
            performer.copy_data_from_to(src, 0, dst, 0, nbytes, src_dev, dst_dev, t.dtype.name, None)
            performer.stream_sync(0)

        self.loop.add_python(run_copy)

    # ------------------------------------------------------------------- run
    def _kernel_failed(self, step: int, status: int) -> TVMDeviceError:
        label, device = self.labels[step]
        base = error_for_status(status, "")
        cls = KernelError if type(base) is TVMDeviceError else type(base)
        return cls(f"operator {label} on device {device!r} failed with status {status} "
                   f"({type(base).__name__})")

    def _check_open(self) -> None:
        if self._closed:
            raise LifecycleError("executor is closed; create a new one with module.executor()")

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
            self._view(t)[...] = arr.reshape(tensor.shape)

    def run(self, inputs: Sequence[np.ndarray], *, profile: bool = False) -> list[np.ndarray]:
        """Run the model once; returns copies of the outputs.

        :param profile: time each step; read the result from :attr:`timings`.
        :raises KernelError: a kernel failed; the message names the operator and device.
        """
        self._check_open()
        self.set_inputs(inputs)
        self.invoke(profile=profile)
        return [np.array(self._view(t)) for t in self.graph.outputs]

    def invoke(self, *, profile: bool = False) -> None:
        """Run the plan on the inputs already in place (the timed part of :meth:`run`)."""
        self._check_open()
        activated = []
        try:
            for dev in self.devices:
                dev.activate()
                activated.append(dev)
            if profile or self.timeline is not None:
                self._run_profiled()
            else:
                self.loop.run()
        finally:
            first: BaseException | None = None
            for dev in reversed(activated):
                try:
                    dev.deactivate()
                except TVMDeviceError as exc:
                    first = first or exc
            if first is not None:
                raise first

    def _run_profiled(self) -> None:
        self.timings: list[StepTiming] = []
        for i, (label, device) in enumerate(self.labels):
            start = time.perf_counter_ns()
            self.loop.run(i, i + 1)
            ns = time.perf_counter_ns() - start
            self.timings.append(StepTiming(i, label, device, ns))
            if self.timeline is not None:
                cat = "copy" if label.startswith("copy") else "kernel"
                self.timeline.add_span(label, cat, start, ns, device=device)

    def tensor(self, index: int) -> np.ndarray:
        """A copy of tensor ``index`` after a run (constants, host tensors, or device tensors)."""
        self._check_open()
        t = self.graph.tensors[index]
        if t.is_constant:
            return np.array(t.data)
        pool = self.module.plan.pools[HOST]
        if (index, HOST) in pool.offsets:
            return np.array(self._view(index))
        for memory, mem in self.memories.items():
            if mem.device is not None and (index, memory) in self.module.plan.pools[memory].block_of:
                out = np.empty(t.shape, t.dtype)
                mem.device.download(self._address(index, memory), out.reshape(-1).view(np.uint8))
                return out
        raise KeyError(f"tensor #{index} is not materialised in any memory")

    # --------------------------------------------------------------- closing
    def close(self) -> None:
        """Free every allocation, then Close and Destroy the devices (idempotent)."""
        if self._closed:
            return
        self._teardown()

    def _teardown(self) -> None:
        self._closed = True
        first: BaseException | None = None
        for dev in reversed(self.devices):
            for name, ptr in list(self._scratch.items()):
                if name == dev.name and ptr in dev.allocations:
                    dev.free_workspace(ptr)
            for ptr in list(dev.allocations):
                alloc = dev.allocations[ptr]
                (dev.free_workspace if alloc.kind == "workspace" else dev.free_data_space)(ptr)
            try:
                dev.release()
            except TVMDeviceError as exc:
                first = first or exc
        self._scratch.clear()
        self._const_ptrs.clear()
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
