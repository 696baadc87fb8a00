"""Framework defaults for the optional Device API hooks.

Registered as the plugin ``tvmdevice.defaults``; the binding falls back to
these implementations when a device's owning plugin does not provide a hook
(the hookspecs say, per hook, what the default does).  They call the owning
plugin's *raw* implementations through the device's binding, so the
framework's allocation tracking sees each block exactly once.

Host-memory devices (``MemoryKind.HOST``) get the data-space hooks too: blocks
of the device's :class:`~tvmdevice.memory.HostHeap` (``host_heap(device)``:
zeroed, aligned, unique even for zero bytes, counted in ``bytes_in_use``,
capped by whatever capacity the plugin gave the heap) and a plain host copy.
Separate-memory devices must implement those hooks (the registry refuses them
otherwise), so the defaults never guess at device addresses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .device_type import MemoryKind
from .errors import NotSupportedError
from .hookspecs import hookimpl
from .memory import copy_host, host_heap

if TYPE_CHECKING:  # pragma: no cover
    from .device import Device
    from .device_type import DeviceType
    from .ir import Graph, Operator
    from .ops import OpData

WORKSPACE_ALIGNMENT = 64

#: Device API hooks the framework implements on host memory for ``MemoryKind.HOST`` devices.
HOST_MEMORY_HOOKS: frozenset[str] = frozenset({
    "tvmdevice_alloc_data_space", "tvmdevice_free_data_space", "tvmdevice_copy_data_from_to",
})


def _host_only(device: "Device", hook: str) -> None:
    # Unreachable for registered plugins (validation requires the hook of a
    # separate-memory device); kept so a misuse fails loudly, not with a bad pointer.
    if device.memory is not MemoryKind.HOST:
        raise NotSupportedError(f"device {device.name!r} has separate memory: its plugin must implement {hook}")


@hookimpl(trylast=True)
def tvmdevice_set_device(device: "Device") -> None:
    return None


@hookimpl(trylast=True)
def tvmdevice_get_target_property(device: "Device", property: str) -> Any:
    return device.options.get(property)


@hookimpl(trylast=True)
def tvmdevice_get_data_size(device: "Device", shape: tuple[int, ...], dtype: str, mem_scope: str | None) -> int:
    if mem_scope not in (None, "global"):
        raise NotSupportedError(f"device {device.name!r} has no memory scope {mem_scope!r}")
    import numpy as np

    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


@hookimpl(trylast=True)
def tvmdevice_alloc_data_space_scoped(device: "Device", shape: tuple[int, ...], dtype: str,
                                      mem_scope: str | None) -> int:
    # Reached only through trace-mode pluggy calls; Device routes the default
    # through its checked flat form instead.
    nbytes = device._binding.hook("tvmdevice_get_data_size")(shape, dtype, mem_scope)
    return device._binding.hook("tvmdevice_alloc_data_space")(nbytes, WORKSPACE_ALIGNMENT, dtype)


@hookimpl(trylast=True)
def tvmdevice_alloc_data_space(device: "Device", nbytes: int, alignment: int, type_hint: str | None) -> int:
    _host_only(device, "tvmdevice_alloc_data_space")
    return host_heap(device).alloc(nbytes, alignment, device=device.name)


@hookimpl(trylast=True)
def tvmdevice_free_data_space(device: "Device", ptr: int) -> None:
    _host_only(device, "tvmdevice_free_data_space")
    host_heap(device).free(ptr)


@hookimpl(trylast=True)
def tvmdevice_copy_data_from_to(device: "Device", src: int, src_offset: int, dst: int, dst_offset: int,
                                nbytes: int) -> None:
    # The framework routes a copy touching separate memory to that device, so
    # a host-memory device only ever copies between host addresses.
    _host_only(device, "tvmdevice_copy_data_from_to")
    copy_host(src, src_offset, dst, dst_offset, nbytes)


@hookimpl(trylast=True)
def tvmdevice_create_stream(device: "Device") -> int:
    counter = device.plugin_state.get("_default_stream_counter", 0) + 1
    device.plugin_state["_default_stream_counter"] = counter
    return counter


@hookimpl(trylast=True)
def tvmdevice_free_stream(device: "Device", stream: int) -> None:
    return None


@hookimpl(trylast=True)
def tvmdevice_stream_sync(device: "Device", stream: int) -> None:
    return None


@hookimpl(trylast=True)
def tvmdevice_set_stream(device: "Device", stream: int) -> None:
    return None


@hookimpl(trylast=True)
def tvmdevice_get_current_stream(device: "Device") -> int:
    return device.current_stream


@hookimpl(trylast=True)
def tvmdevice_sync_stream_from_to(device: "Device", event_src: int, event_dst: int) -> None:
    return None


@hookimpl(trylast=True)
def tvmdevice_alloc_workspace(device: "Device", nbytes: int, type_hint: str | None) -> int:
    return device._binding.hook("tvmdevice_alloc_data_space")(nbytes, WORKSPACE_ALIGNMENT, type_hint)


@hookimpl(trylast=True)
def tvmdevice_free_workspace(device: "Device", ptr: int) -> None:
    device._binding.hook("tvmdevice_free_data_space")(ptr)


@hookimpl(trylast=True)
def tvmdevice_supports_device_pointer_arithmetics_on_host(device: "Device") -> bool:
    return device.memory is MemoryKind.HOST


@hookimpl(trylast=True)
def tvmdevice_memory_capacity(device_type: "DeviceType", options: dict[str, Any]) -> int | None:
    return None


@hookimpl(trylast=True)
def tvmdevice_workspace_capacity(device_type: "DeviceType", options: dict[str, Any]) -> int | None:
    return None


@hookimpl(trylast=True)
def tvmdevice_prepare_copy(device_type: "DeviceType", options: dict[str, Any], nbytes: int,
                           to_device: bool) -> None:
    return None


@hookimpl(trylast=True)
def tvmdevice_export_sources(device_type: "DeviceType", options: dict[str, Any], cpu: str) -> None:
    return None


@hookimpl(trylast=True)
def tvmdevice_check_operator(device_type: "DeviceType", options: dict[str, Any], graph: "Graph",
                             op: "Operator", op_data: "OpData | None") -> str | None:
    # A data-type variant (int16...) needs its own declaration: "ADD:int16".
    from .ops import kernel_key

    key = kernel_key(op.type, op_data)
    if key in device_type.operators:
        return None
    variant = getattr(op_data, "variant", "")
    return f"{device_type.name} has no {variant + ' ' if variant else ''}{op.type} kernel"
