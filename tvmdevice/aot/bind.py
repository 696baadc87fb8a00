"""Binding: a compiled plan made concrete on opened devices.

:class:`BoundPlan` turns the memory plan into addresses — the host arena, each
separate memory's blocks (AllocDataSpace), preloaded constants — and the
schedule into a :class:`~tvmdevice.aot._runloop.RunLoop` of kernel calls and
copies, each call with its planned buffers (scratch included: nothing is
allocated at run time) and its device's handle last.  It knows nothing of
the device lifecycle: the :class:`~tvmdevice.aot.executor.Executor` opens the
devices before binding and frees what binding allocated when it closes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._abi import kernel_info
from ..binding import plugin_function
from ..errors import KernelError, TensorUnavailableError, TVMDeviceError, error_for_status
from ..ir import ABSENT
from ..kernel import is_c_kernel
from ..memory import address_of, aligned_empty
from ._runloop import RunLoop
from .memory_plan import tensor_key
from .schedule import HOST, SCRATCH, CopyStep, KernelStep

if TYPE_CHECKING:  # pragma: no cover
    from ..device import Device
    from .compiler import CompiledModule

__all__ = ["BoundPlan", "CallRecord", "DeviceStorage", "STORAGE_ALIGNMENT", "device_storage"]

#: Alignment of the host arena and of every device block and preloaded constant.
STORAGE_ALIGNMENT = 64


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
class DeviceStorage:
    """What binding allocates in one separate memory, in order: the plan's blocks, then one block per
    constant preloaded there.  Slot ``k`` is the ``k``-th allocation (an export's ``<device>_addr[k]``).

    :ivar blocks: each block's bytes.
    :ivar constants: the preloaded constant tensors, in schedule order.
    """

    blocks: tuple[int, ...]
    constants: tuple[int, ...]

    @property
    def slots(self) -> int:
        return len(self.blocks) + len(self.constants)

    def constant_slot(self, tensor: int) -> int:
        return len(self.blocks) + self.constants.index(tensor)


def device_storage(module: "CompiledModule") -> dict[str, DeviceStorage]:
    """Every separate memory of ``module``'s plan (pool order, then memories holding only constants)
    and what binding allocates there: the one source of the executor's and an export's device slots."""
    memories = [name for name in module.plan.pools if name != HOST]
    memories += [m for _, m in module.schedule.constants if m != HOST and m not in memories]
    found = {}
    for memory in dict.fromkeys(memories):
        pool = module.plan.pools.get(memory)
        found[memory] = DeviceStorage(tuple(pool.blocks) if pool is not None else (),
                                      tuple(t for t, m in module.schedule.constants if m == memory))
    return found


class BoundPlan:
    """The plan of ``module`` bound to ``devices`` (opened, in target order).

    Allocates device storage and preloads constants on creation; the caller
    frees it through the devices (every allocation is tracked there).

    :ivar arena: the host arena (activations and host-memory scratch).
    :ivar calls: a :class:`CallRecord` per kernel call, in schedule order.
    :ivar labels: ``(label, device)`` per step, in schedule order.
    :ivar loop: the run loop over every step.
    """

    def __init__(self, module: "CompiledModule", devices: "list[Device]") -> None:
        self.module, self.graph, self.devices = module, module.graph, devices
        self._by_name = {d.name: d for d in devices}
        self.calls: list[CallRecord] = []
        self.labels: list[tuple[str, str]] = []
        self._keep: list[Any] = []
        self.arena = aligned_empty(max(module.plan.pools[HOST].size, 1), STORAGE_ALIGNMENT)
        self._arena_address = address_of(self.arena)
        self.blocks: dict[str, list[int]] = {}
        self._constants: dict[tuple[int, str], int] = {}
        self._views: dict[int, np.ndarray] = {}
        self._allocate()
        self.reset_state()
        self.loop = RunLoop(len(module.schedule.steps), self._kernel_failed)
        for step in module.schedule.steps:
            if isinstance(step, KernelStep):
                self._add_kernel(step)
            else:
                self._add_copy(step)

    # ------------------------------------------------------------- storage
    def _allocate(self) -> None:
        # host constants are read in place, as firmware reads its weights from flash
        for memory, storage in device_storage(self.module).items():
            dev = self._by_name[memory]
            blocks = [dev.alloc_data_space(size, STORAGE_ALIGNMENT) for size in storage.blocks]
            if memory in self.module.plan.pools:
                self.blocks[memory] = blocks
            for tensor in storage.constants:
                data = self.graph.tensors[tensor].data
                assert data is not None, "schedule.constants lists constant tensors only"
                ptr = dev.alloc_data_space(data.nbytes, STORAGE_ALIGNMENT, data.dtype.name)
                dev.upload(np.ascontiguousarray(data), ptr)
                self._constants[(tensor, memory)] = ptr
        for dev in self.devices:
            dev.stream_sync(0)

    def reset_state(self) -> None:
        """Give every variable tensor (operator state) its reset value, as TFLM's ResetVariableTensors does."""
        for t in self.module.schedule.states:
            self.view(t)[...] = self.graph.tensors[t].reset_value

    def address(self, tensor: int, memory: str) -> int:
        """The address of non-constant ``tensor`` in ``memory`` (a view's is its source's)."""
        return self._planned(tensor_key(self.module.schedule.source(tensor), memory))

    def _planned(self, key: Any) -> int:
        memory = key[2]
        pool = self.module.plan.pools[memory]
        if memory == HOST:
            return self._arena_address + pool.offsets[key]
        return self.blocks[memory][pool.block_of[key]]

    def view(self, tensor: int) -> np.ndarray:
        """The host-arena view of a non-constant tensor (typed and shaped); a constant's own read-only data
        (a graph output may be a constant: the schedule gives it no buffer, TFLM returns the model's data).

        Made once per tensor: the arena never moves, and runs read their inputs' and outputs' views each time.
        """
        view = self._views.get(tensor)
        if view is None:
            t = self.graph.tensors[tensor]
            if t.data is not None:
                return t.data
            off = self.module.plan.pools[HOST].offsets[tensor_key(self.module.schedule.source(tensor), HOST)]
            view = self._views[tensor] = self.arena[off: off + t.nbytes].view(t.dtype).reshape(t.shape)
        return view

    def tensor(self, index: int) -> np.ndarray:
        """A copy of tensor ``index`` (constants, host tensors, or device tensors).

        :raises TensorUnavailableError: for an index out of range, or a tensor no memory holds.
        """
        n = len(self.graph.tensors)
        if not isinstance(index, (int, np.integer)) or isinstance(index, bool) or not 0 <= index < n:
            raise TensorUnavailableError(f"tensor index {index!r} is out of range: the model has {n} tensors")
        t = self.graph.tensors[index]
        if t.is_constant:
            return np.array(t.data)
        for fold in self.module.placement.folds:
            if fold.padded == index:
                raise TensorUnavailableError(
                    f"tensor #{index} is the output of PAD #{fold.pad}, folded into operator #{fold.conv}'s window: "
                    "it is never materialised; compile with preserve_all_tensors=True to keep it")
        for part in self.module.placement.partitions:
            if index in part.internal:
                raise TensorUnavailableError(
                    f"tensor #{index} lives inside {part.describe()}'s one call: it is never materialised; "
                    "compile with preserve_all_tensors=True to keep it")
        source = self.module.schedule.source(index)
        if tensor_key(source, HOST) in self.module.plan.pools[HOST].offsets:
            return np.array(self.view(index))
        for memory in self.blocks:
            if tensor_key(source, memory) in self.module.plan.pools[memory].block_of:
                out = np.empty(t.shape, t.dtype)
                self._by_name[memory].download(self.address(index, memory), out.reshape(-1).view(np.uint8))
                return out
        readers = [op.index for op in self.graph.operators if index in op.inputs or index in op.outputs]
        why = ("no operator reads or writes it" if not readers
               else f"operators {readers} use it, but the plan holds it in no memory")
        raise TensorUnavailableError(f"tensor #{index} ({t.name!r}) is not materialised in any memory: {why}")

    # --------------------------------------------------------------- steps
    def _add_kernel(self, step: KernelStep) -> None:
        op = step.call
        call = self.module.prepared[op.index]
        dev = self.devices[step.entry]
        self.labels.append((f"#{op.index} {op.type}", dev.name))
        scratch = (SCRATCH, op.index, step.memory) if step.scratch_bytes else None
        if is_c_kernel(call.kernel):
            buffers: list[int | None] = [self._input_address(t, step.memory) for t in op.inputs]
            buffers += [self.address(t, step.memory) for t in op.outputs]
            if scratch is not None:
                buffers.append(self._planned(scratch))
            self.loop.add_kernel(call.kernel, call.params, buffers, dev.handle_address)
            self.calls.append(CallRecord(op.index, step.device, kernel_info(call.kernel)[0], dev.handle_address,
                                         dev.name, tuple(buffers)))
            return
        views: list[Any] = [None if t == ABSENT else self.graph.tensors[t].data if self.graph.tensors[t].is_constant
                            else self.view(t) for t in op.inputs]
        views += [self.view(t) for t in op.outputs]
        if scratch is not None:
            off = self.module.plan.pools[HOST].offsets[scratch]
            views.append(self.arena[off: off + step.scratch_bytes])
        self.loop.add_python(_python_call(call.kernel, call.params, views, dev, self.labels[-1][0]))
        self.calls.append(CallRecord(op.index, step.device, call.name, dev.handle_address, dev.name,
                                     tuple(address_of(v) if v is not None else None for v in views)))

    def _input_address(self, tensor: int, memory: str) -> int | None:
        if tensor == ABSENT:
            return None
        if not self.graph.tensors[tensor].is_constant:
            return self.address(tensor, memory)
        if memory != HOST:
            return self._constants[(tensor, memory)]
        data = self.graph.tensors[tensor].data
        assert data is not None
        self._keep.append(data)
        return address_of(data)

    def _add_copy(self, step: CopyStep) -> None:
        t = self.graph.tensors[step.tensor]
        self.labels.append((f"copy t{step.tensor} {step.src}->{step.dst}", step.dst if step.dst != HOST else step.src))
        src_dev = None if step.src == HOST else self._by_name[step.src]
        dst_dev = None if step.dst == HOST else self._by_name[step.dst]
        src = self.view(step.tensor).reshape(-1).view(np.uint8) if step.src == HOST else \
            self.address(step.tensor, step.src)
        dst = self.view(step.tensor).reshape(-1).view(np.uint8) if step.dst == HOST else \
            self.address(step.tensor, step.dst)
        performer = dst_dev if dst_dev is not None else src_dev
        assert performer is not None, "host-to-host copies are never scheduled"
        nbytes, dtype = t.nbytes, t.dtype.name
        call = self._c_copy(performer, nbytes, dst_dev is not None)
        if call is not None:
            addresses = [src if isinstance(src, int) else address_of(src),
                         dst if isinstance(dst, int) else address_of(dst)]
            self.loop.add_kernel(call.kernel, call.params, addresses, performer.handle_address)
            return

        def run_copy() -> None:
            performer.copy_data_from_to(src, 0, dst, 0, nbytes, src_dev, dst_dev, dtype, None)
            performer.stream_sync(0)

        self.loop.add_python(run_copy)

    def _c_copy(self, device: "Device", nbytes: int, to_device: bool) -> Any:
        """The device's C copy call (``tvmdevice_prepare_copy``) when its CopyDataFromTo is reached directly.

        Not in trace mode, and not when anything stands in for the plugin's own CopyDataFromTo (a
        wrapper, fault injection): those must see every copy, so the copy stays a call of the hook.
        """
        if device._binding.trace or plugin_function(device._binding.hook("tvmdevice_copy_data_from_to"),
                                                    device) is None:
            return None
        call = self.module.registry.prepare_copy(device.type, device.options, nbytes, to_device)
        if call is None or not is_c_kernel(call.kernel):
            return None
        return call

    def _kernel_failed(self, step: int, status: int) -> TVMDeviceError:
        label, device = self.labels[step]
        base = error_for_status(status, "")
        cls = KernelError if type(base) is TVMDeviceError else type(base)
        # A known code is named by its class; an unknown one by error_for_status's text.
        return cls(f"operator {label} on device {device!r} failed with status {status} "
                   f"({str(base) or type(base).__name__})")


def _python_call(kernel: Any, params: Any, views: list[Any], dev: "Device", label: str) -> Any:
    def run_python_kernel() -> None:
        try:
            kernel(params, views, dev)
        except TVMDeviceError:
            raise
        except Exception as exc:
            raise KernelError(f"operator {label} on device {dev.name!r} raised {type(exc).__name__}: "
                              f"{exc}") from exc

    return run_python_kernel
