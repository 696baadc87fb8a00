"""The built-in ``c`` device: the complete Device API on host memory.

It is the reference implementation every plugin is compared against and the
host (last entry) of every target string.  Its kernels are portable C99
reference kernels (``tvmdevice/host/csrc``), bit-exact with TensorFlow Lite
Micro, called through the kernel ABI like any plugin's
(:mod:`tvmdevice.host.calls`, imported only when an operator is prepared).
Its operators, params structs and prepare steps all come from one table,
:mod:`tvmdevice.host.kernel_table` (docs/host-device.md).  The numpy
reference kernels of :mod:`tvmdevice.testing.reference` are the independent
oracle the tests check every device against; the device does not run them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..attrs import DeviceAttrKind
from ..device_type import DeviceType, MemoryKind
from ..errors import NotSupportedError
from ..hookspecs import hookimpl
from ..layout import Field, Layout
from ..memory import copy_host, host_heap
from ..options import TargetOption
from .kernel_table import OPERATORS

if TYPE_CHECKING:  # pragma: no cover
    from ..device import Device
    from ..export import DeviceSources
    from ..ir import Graph, Operator
    from ..kernel import PreparedCall
    from ..ops import OpData

API_VERSION = 1

LAYOUT = Layout(
    "tvm_device_c_t",
    (
        Field("api_version", "uint32_t", doc="TVMD_DEVICE_API_VERSION the device was built for"),
        Field("active", "uint32_t", doc="1 between Activate and Deactivate"),
        Field("bytes_in_use", "uint64_t", doc="bytes currently allocated (data space and workspace)"),
        Field("peak_bytes", "uint64_t", doc="high-water mark of bytes_in_use since Open"),
        Field("num_allocations", "uint32_t", doc="live allocations"),
        Field("num_opens", "uint32_t", doc="times the device was opened"),
        Field("current_stream", "uint64_t", doc="the stream set by SetStream (0 = default)"),
    ),
    doc="State of the built-in host device.",
)

DEVICE_TYPE = DeviceType(
    name="c",
    aliases=("cpu", "llvm"),
    layout=LAYOUT,
    options=(
        TargetOption("mcpu", str, "", "CPU the generated code is for, e.g. cortex-m55 (informational)"),
        TargetOption("march", str, "", "architecture, e.g. armv8.1-m.main (informational)"),
        TargetOption("workspace_bytes", int, 0, "cap on host memory the device may hand out; 0 = no cap",
                     minimum=0),
    ),
    memory=MemoryKind.HOST,
    operators=OPERATORS,
    is_host=True,
    description="host CPU: portable C99 reference kernels, bit-exact with TFLite Micro",
)


@hookimpl
def tvmdevice_device_types() -> list[DeviceType]:
    return [DEVICE_TYPE]



# ------------------------------------------------------------------ lifecycle
@hookimpl
def tvmdevice_init(device: "Device", options: dict[str, Any]) -> None:
    device.fields["api_version"][0] = API_VERSION


@hookimpl
def tvmdevice_destroy(device: "Device") -> None:
    device.plugin_state.clear()


@hookimpl
def tvmdevice_open(device: "Device") -> None:
    device.fields["num_opens"][0] += 1
    host_heap(device, device.options["workspace_bytes"]).peak_bytes = 0
    _sync_counters(device)


@hookimpl
def tvmdevice_close(device: "Device") -> None:
    host_heap(device).clear()
    _sync_counters(device)


def _sync_counters(device: "Device") -> None:
    """Mirror the heap's accounting into the C-visible struct."""
    heap, f = host_heap(device), device.fields
    f["bytes_in_use"][0] = heap.bytes_in_use
    f["peak_bytes"][0] = heap.peak_bytes
    f["num_allocations"][0] = len(heap)


@hookimpl
def tvmdevice_activate(device: "Device") -> None:
    device.fields["active"][0] = 1


@hookimpl
def tvmdevice_deactivate(device: "Device") -> None:
    device.fields["active"][0] = 0


# ---------------------------------------------------------------- attributes
@hookimpl
def tvmdevice_get_attr(device: "Device", kind: int) -> Any:
    kind = DeviceAttrKind(kind)
    if kind is DeviceAttrKind.kExist:
        return 1
    if kind is DeviceAttrKind.kDeviceName:
        return "c"
    if kind is DeviceAttrKind.kApiVersion:
        return API_VERSION
    if kind in (DeviceAttrKind.kTotalGlobalMemory, DeviceAttrKind.kAvailableGlobalMemory):
        cap = device.options.get("workspace_bytes", 0)
        if cap:
            used = host_heap(device, cap).bytes_in_use
            return cap if kind is DeviceAttrKind.kTotalGlobalMemory else cap - used
        pages = "SC_PHYS_PAGES" if kind is DeviceAttrKind.kTotalGlobalMemory else "SC_AVPHYS_PAGES"
        try:
            return os.sysconf(pages) * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            return None
    if kind is DeviceAttrKind.kMultiProcessorCount:
        return os.cpu_count()
    return None  # GPU-style attributes do not apply to a host CPU


# ---------------------------------------------------------------- data space
@hookimpl
def tvmdevice_alloc_data_space(device: "Device", nbytes: int, alignment: int, type_hint: str | None) -> int:
    heap = host_heap(device, device.options["workspace_bytes"])
    try:
        return heap.alloc(nbytes, alignment, device="c")
    finally:
        _sync_counters(device)


@hookimpl
def tvmdevice_free_data_space(device: "Device", ptr: int) -> None:
    host_heap(device).free(ptr)
    _sync_counters(device)


@hookimpl
def tvmdevice_copy_data_from_to(device: "Device", src: int, src_offset: int, dst: int, dst_offset: int,
                                nbytes: int) -> None:
    # Host memory only: the framework routes copies that touch separate
    # memory to that device, so both sides are host addresses here.
    copy_host(src, src_offset, dst, dst_offset, nbytes)


@hookimpl
def tvmdevice_set_stream(device: "Device", stream: int) -> None:
    device.fields["current_stream"][0] = stream


@hookimpl
def tvmdevice_get_data_size(device: "Device", shape: tuple[int, ...], dtype: str, mem_scope: str | None) -> int:
    if mem_scope not in (None, "global"):
        raise NotSupportedError(f"device 'c' has only the global memory scope, not {mem_scope!r}")
    import numpy as np

    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


# ------------------------------------------------------------------- kernels
@hookimpl
def tvmdevice_check_operator(device_type: DeviceType, options: dict[str, Any], graph: "Graph",
                             op: "Operator", op_data: "OpData | None") -> str | None:
    from ..ops import kernel_key

    key = kernel_key(op.type, op_data)
    if key not in OPERATORS:
        return f"no host kernel for {key}"
    return None


@hookimpl
def tvmdevice_prepare_operator(device_type: DeviceType, options: dict[str, Any], graph: "Graph",
                               op: "Operator", op_data: "OpData | None") -> "PreparedCall":
    # The op data is the pipeline's, computed once for every device; the host
    # analyzes the operator itself only when called without it.
    from . import calls

    return calls.prepare(graph, op, op_data)


# -------------------------------------------------------------------- export
@hookimpl
def tvmdevice_export_sources(device_type: DeviceType, options: dict[str, Any], cpu: str) -> "DeviceSources":
    # The same portable C99 files the host extension compiles, for every CPU;
    # the device has no C struct in firmware (its kernels ignore the handle).
    from pathlib import Path

    from ..export import DeviceSources
    from .headers import HEADERS

    csrc = Path(__file__).resolve().parent / "csrc"
    return DeviceSources(sources=tuple(sorted(csrc.glob("*.c"))), include_dirs=(csrc,),
                         headers={name: render() for name, render in HEADERS.items()})
