"""The ``cmsis-nn`` device plugin: hook implementations.

Registered through the ``tvmdevice`` entry-point group.  Light to import: the
compiled kernels (:mod:`tvmdevice_cmsis._kernels`) load inside the hooks that
need them, so ``tvmdevice plugins`` stays fast and a broken build is reported
rather than fatal.

The lifecycle hooks call the C functions ``TVMDeviceCmsisNn<Hook>`` that a
firmware build would call, on the framework-allocated
``tvm_device_cmsis_nn_t`` (:class:`tvmdevice.plugin.CLifecycle`; Init also writes
the target options C cannot see);
data space and copies are the framework's host-memory hooks.  Python keeps
only the workspace blocks, whose cap and bookkeeping live in the struct.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from tvmdevice.errors import DeviceMemoryError
from tvmdevice.plugin import CLifecycle, DeviceAttrKind, DeviceType, address_of, aligned_empty, hookimpl

from .device import API_VERSION, DEVICE_TYPE

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.device import Device
    from tvmdevice.export import DeviceSources
    from tvmdevice.ir import Graph, Operator
    from tvmdevice.kernel import PreparedCall
    from tvmdevice.ops import OpData

#: Alignment of workspace blocks: a cache line, enough for any vector load.
WORKSPACE_ALIGNMENT = 64


@hookimpl
def tvmdevice_device_types() -> list[DeviceType]:
    return [DEVICE_TYPE]


# ------------------------------------------------------------------ lifecycle
class Lifecycle(CLifecycle):
    """``TVMDeviceCmsisNn<Step>``; Init then writes the target options C cannot see into the struct
    (an export's generated configure function writes the same members)."""

    @hookimpl
    def tvmdevice_init(self, device: "Device", options: dict[str, Any]) -> None:
        from .export import configured_fields

        super().tvmdevice_init(device, options)
        for name, value in configured_fields(options).items():
            device.fields[name][0] = value


lifecycle = Lifecycle("tvmdevice_cmsis._kernels:LIFECYCLE", DEVICE_TYPE.name)


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
    device.plugin_state.setdefault("workspace", {})[ptr] = (buf, nbytes)
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
def tvmdevice_workspace_capacity(device_type: DeviceType, options: dict[str, Any]) -> int | None:
    # -scratch_kb=0 means no limit of the device's own.
    return int(options.get("scratch_kb", 0)) * 1024 or None


# No check_operator: the default pre-filter (the operator is one of
# DEVICE_TYPE.operators) is all there is to check cheaply; prepare decides,
# raising a Refusal that placement reports before trying the next device.
@hookimpl
def tvmdevice_prepare_operator(device_type: DeviceType, options: dict[str, Any], graph: "Graph",
                               op: "Operator", op_data: "OpData | None") -> "PreparedCall":
    from .kernels import prepare

    return prepare(graph, op, op_data, mcpu=str(options.get("mcpu", "")))


# -------------------------------------------------------------------- export
@hookimpl
def tvmdevice_export_sources(device_type: DeviceType, options: dict[str, Any], cpu: str) -> "DeviceSources | None":
    from .export import export_sources

    return export_sources(options, cpu)
