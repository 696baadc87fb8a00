"""A small, conformant host-memory device plugin: a starting point and a yardstick.

Not registered anywhere by default.  Plugin authors can read it as the least
a device must do to pass ``tvmdevice check``; the kit's own tests register
it (and deliberately broken variants built on it) with
``registry.register(module, name)``.  A variant reuses every hook with
``from tvmdevice.testing.sample_plugin import *`` and redefines the one it
changes, plus ``tvmdevice_device_types`` to name its own device::

    from tvmdevice.testing.sample_plugin import *  # noqa: F403
    from tvmdevice.testing.sample_plugin import device_type

    @hookimpl
    def tvmdevice_device_types():
        return [device_type("my-variant")]

Memory is plain host memory from the framework's default data-space hooks
(:mod:`tvmdevice.defaults`), capped by the ``-capacity`` option (given to the
device's heap at Open) so that running out of it is reportable; streams use
the framework defaults too (the device is synchronous).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..attrs import DeviceAttrKind
from ..device_type import DeviceType, MemoryKind
from ..hookspecs import hookimpl
from ..layout import Field, Layout
from ..memory import host_heap
from ..names import struct_type
from ..options import TargetOption

if TYPE_CHECKING:  # pragma: no cover
    from ..device import Device

# The hooks are exported so that ``from ... import *`` builds a variant.
__all__ = ["DEFAULT_CAPACITY", "DEVICE_TYPE", "device_type", "hookimpl", "tvmdevice_device_types",
           "tvmdevice_init", "tvmdevice_destroy", "tvmdevice_open", "tvmdevice_close", "tvmdevice_activate",
           "tvmdevice_deactivate", "tvmdevice_get_attr"]

#: Bytes of memory a sample device hands out unless ``-capacity`` says otherwise.
DEFAULT_CAPACITY = 1 << 20


def device_type(name: str, *, operators: frozenset[str] = frozenset(), layout: Layout | None = None) -> DeviceType:
    """The sample device's :class:`DeviceType` under another name (for variants)."""
    if layout is None:
        layout = Layout(struct_type(name), (
            Field("active", "uint32_t", doc="1 between Activate and Deactivate"),
            Field("opens", "uint32_t", doc="times the device was opened"),
            Field("bytes_in_use", "uint64_t", doc="bytes currently allocated"),
        ))
    return DeviceType(name, layout, memory=MemoryKind.HOST, operators=operators,
                      options=(TargetOption("capacity", int, DEFAULT_CAPACITY, "bytes of memory", minimum=1),),
                      description="tvmdevice.testing sample device (host memory)")


DEVICE_TYPE = device_type("sample")


@hookimpl
def tvmdevice_device_types() -> list[DeviceType]:
    return [DEVICE_TYPE]


@hookimpl
def tvmdevice_init(device: "Device", options: dict[str, Any]) -> None:
    device.plugin_state["capacity"] = options["capacity"]


@hookimpl
def tvmdevice_destroy(device: "Device") -> None:
    device.plugin_state.clear()


@hookimpl
def tvmdevice_open(device: "Device") -> None:
    host_heap(device, device.plugin_state["capacity"])
    device.plugin_state["opens"] = device.plugin_state.get("opens", 0) + 1


@hookimpl
def tvmdevice_close(device: "Device") -> None:
    # The framework has freed what the application left; anything still here
    # would be a bookkeeping bug, and Close releases it regardless.
    host_heap(device).clear()


@hookimpl
def tvmdevice_activate(device: "Device") -> None:
    device.plugin_state["active"] = True


@hookimpl
def tvmdevice_deactivate(device: "Device") -> None:
    device.plugin_state["active"] = False


@hookimpl
def tvmdevice_get_attr(device: "Device", kind: int) -> Any:
    kind = DeviceAttrKind(kind)
    capacity = device.plugin_state.get("capacity", device.options["capacity"])
    answers = {
        DeviceAttrKind.kExist: 1,
        DeviceAttrKind.kDeviceName: device.name,
        DeviceAttrKind.kTotalGlobalMemory: capacity,
        DeviceAttrKind.kAvailableGlobalMemory: capacity - host_heap(device, capacity).bytes_in_use,
    }
    return answers.get(kind)  # None: not applicable

