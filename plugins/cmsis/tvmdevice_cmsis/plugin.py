"""The ``cmsis-nn`` device plugin: hook implementations.

Registered through the ``tvmdevice`` entry-point group.  Light to import: the
compiled kernels (:mod:`tvmdevice_cmsis._kernels`) load inside the hooks that
need them, so ``tvmdevice plugins`` stays fast and a broken build is reported
rather than fatal.

The lifecycle hooks call the C functions ``TVMDeviceCmsisNn<Hook>`` that a
firmware build would call, on the framework-allocated
``tvm_device_cmsis_nn_t``; Python keeps only what C cannot: the host buffers
behind data space and workspace pointers.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

from tvmdevice import _hostmem
from tvmdevice.attrs import DeviceAttrKind
from tvmdevice.device_type import DeviceType
from tvmdevice.errors import DeviceMemoryError, error_for_status
from tvmdevice.hookspecs import hookimpl
from tvmdevice.memory import address_of, aligned_empty

from .device import API_VERSION, DEVICE_TYPE

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.aot.ir import Graph, Operator
    from tvmdevice.device import Device
    from tvmdevice.kernel import PreparedCall

#: Alignment of workspace blocks: a cache line, enough for any vector load.
WORKSPACE_ALIGNMENT = 64


@hookimpl
def tvmdevice_device_types() -> list[DeviceType]:
    return [DEVICE_TYPE]


@functools.cache
def _device_steps() -> dict[str, Any]:
    # The compiled extension loads on the first lifecycle call, not at discovery.
    from ._kernels import DEVICE_STEPS

    return DEVICE_STEPS


def _lifecycle(device: "Device", step: str) -> None:
    status = _device_steps()[step](device.handle_address)
    if status:
        raise error_for_status(status, f"cmsis-nn: TVMDeviceCmsisNn{step.capitalize()} returned status {status}")


# ------------------------------------------------------------------ lifecycle
@hookimpl
def tvmdevice_init(device: "Device", options: dict[str, Any]) -> None:
    _lifecycle(device, "init")
    device.fields["scratch_capacity"][0] = int(options.get("scratch_kb", 0)) * 1024


@hookimpl
def tvmdevice_destroy(device: "Device") -> None:
    _lifecycle(device, "destroy")
    device.plugin_state.clear()


@hookimpl
def tvmdevice_open(device: "Device") -> None:
    _lifecycle(device, "open")
    device.plugin_state["buffers"] = {}
    device.plugin_state["workspace"] = {}


@hookimpl
def tvmdevice_close(device: "Device") -> None:
    # The framework has freed every block through the free hooks already.
    device.plugin_state["buffers"] = {}
    device.plugin_state["workspace"] = {}
    _lifecycle(device, "close")


@hookimpl
def tvmdevice_activate(device: "Device") -> None:
    _lifecycle(device, "activate")


@hookimpl
def tvmdevice_deactivate(device: "Device") -> None:
    _lifecycle(device, "deactivate")


# ---------------------------------------------------------------- attributes
@hookimpl
def tvmdevice_get_attr(device: "Device", kind: int) -> Any:
    kind = DeviceAttrKind(kind)
    if kind is DeviceAttrKind.kExist:
        return 1
    if kind is DeviceAttrKind.kDeviceName:
        return DEVICE_TYPE.name
    if kind is DeviceAttrKind.kApiVersion:
        return API_VERSION
    if kind is DeviceAttrKind.kMultiProcessorCount:
        return 1  # the kernels run on the calling thread
    if kind in (DeviceAttrKind.kTotalGlobalMemory, DeviceAttrKind.kAvailableGlobalMemory):
        # Data space is host memory.
        pages = "SC_PHYS_PAGES" if kind is DeviceAttrKind.kTotalGlobalMemory else "SC_AVPHYS_PAGES"
        try:
            return os.sysconf(pages) * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            return None
    return None  # thread blocks, warps, clocks, GPU architectures: not applicable


# ---------------------------------------------------------------- data space
@hookimpl
def tvmdevice_alloc_data_space(device: "Device", nbytes: int, alignment: int, type_hint: str | None) -> int:
    # Zero-byte allocations still get a unique, valid address.
    buf = aligned_empty(max(nbytes, 1), alignment)
    ptr = address_of(buf)
    device.plugin_state["buffers"][ptr] = buf
    return ptr


@hookimpl
def tvmdevice_free_data_space(device: "Device", ptr: int) -> None:
    del device.plugin_state["buffers"][ptr]


@hookimpl
def tvmdevice_copy_data_from_to(device: "Device", src: int, src_offset: int, dst: int, dst_offset: int,
                                nbytes: int, src_device: "Device | None", dst_device: "Device | None",
                                type_hint: str | None, stream: int | None) -> None:
    # Host memory on both sides: the framework checked both ranges.
    _hostmem.copy_bytes(dst + dst_offset, src + src_offset, nbytes)


# ----------------------------------------------------------------- workspace
@hookimpl
def tvmdevice_alloc_workspace(device: "Device", nbytes: int, type_hint: str | None) -> int:
    f = device.fields
    capacity = int(f["scratch_capacity"][0])
    in_use = int(f["scratch_in_use"][0])
    if capacity and in_use + nbytes > capacity:
        free = capacity - in_use
        raise DeviceMemoryError(
            f"device 'cmsis-nn': out of scratch memory: requested {nbytes} B, free {free} B, largest free "
            f"block {free} B of {capacity} B (raise -scratch_kb)")
    buf = aligned_empty(max(nbytes, 1), WORKSPACE_ALIGNMENT)
    ptr = address_of(buf)
    device.plugin_state["workspace"][ptr] = (buf, nbytes)
    f["scratch"][0] = ptr
    f["scratch_bytes"][0] = nbytes
    f["scratch_in_use"][0] = in_use + nbytes
    return ptr


@hookimpl
def tvmdevice_free_workspace(device: "Device", ptr: int) -> None:
    blocks = device.plugin_state["workspace"]
    _, nbytes = blocks.pop(ptr)
    f = device.fields
    f["scratch_in_use"][0] -= nbytes
    if int(f["scratch"][0]) == ptr:
        # Workspace is used in stack order: the block below becomes current.
        if blocks:
            last = next(reversed(blocks))
            f["scratch"][0], f["scratch_bytes"][0] = last, blocks[last][1]
        else:
            f["scratch"][0], f["scratch_bytes"][0] = 0, 0


# ------------------------------------------------------------------- kernels
@hookimpl
def tvmdevice_check_operator(device_type: DeviceType, options: dict[str, Any], graph: "Graph",
                             op: "Operator") -> str | None:
    from .ops import refusal

    return refusal(graph, op)


@hookimpl
def tvmdevice_workspace_capacity(device_type: DeviceType, options: dict[str, Any]) -> int | None:
    # -scratch_kb=0 means no limit of the device's own.
    return int(options.get("scratch_kb", 0)) * 1024 or None


@hookimpl
def tvmdevice_prepare_operator(device_type: DeviceType, options: dict[str, Any], graph: "Graph",
                               op: "Operator") -> "PreparedCall":
    from .kernels import prepare

    return prepare(graph, op)
