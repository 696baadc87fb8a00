"""The ethos-u plugin: tvmdevice hook implementations for Arm's Ethos-U through Vela.

Light to import: Vela and the compiled extension load inside the hooks that
need them.  The lifecycle is all C (``csrc/ethosu_device.c``); the device's
memory is the host's (the NPU addresses system memory through its regions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tvmdevice.plugin import CLifecycle, DeviceAttrKind, hookimpl

from .device import DEVICE_TYPE

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.device import Device
    from tvmdevice.device_type import DeviceType
    from tvmdevice.export import DeviceSources
    from tvmdevice.ir import Graph, Operator
    from tvmdevice.kernel import PreparedCall
    from tvmdevice.ops import OpData
    from tvmdevice.partition import Partition

__all__ = ["DEVICE_TYPE"]

NAME = DEVICE_TYPE.name

#: The six lifecycle hooks: the C functions of the extension's table.
lifecycle = CLifecycle("tvmdevice_ethosu._ethosu:LIFECYCLE", NAME)


@hookimpl
def tvmdevice_device_types() -> list["DeviceType"]:
    return [DEVICE_TYPE]


@hookimpl
def tvmdevice_get_attr(device: "Device", kind: int) -> Any:
    kind = DeviceAttrKind(kind)
    if kind is DeviceAttrKind.kExist:
        return 1
    if kind is DeviceAttrKind.kDeviceName:
        return NAME
    if kind is DeviceAttrKind.kApiVersion:
        return int(device.fields["api_version"][0])
    return None


@hookimpl
def tvmdevice_check_operator(device_type: "DeviceType", options: dict[str, Any], graph: "Graph",
                             op: "Operator", op_data: "OpData | None") -> str | None:
    from .placement import check_operator

    return check_operator(options, graph, op)


@hookimpl
def tvmdevice_prepare_partition(device_type: "DeviceType", options: dict[str, Any], graph: "Graph",
                                partition: "Partition") -> "PreparedCall":
    from .placement import prepare_partition

    return prepare_partition(options, graph, partition)


@hookimpl
def tvmdevice_export_sources(device_type: "DeviceType", options: dict[str, Any], cpu: str,
                             calls: "Sequence[PreparedCall]") -> "DeviceSources | None":
    # The same portable C as the extension and the generated headers; the
    # partition kernel reaches the functional model through tvmd_ethosu_launch;
    # the memories outside the plan are sized for the model's calls.
    from .export import export_sources

    return export_sources(options, cpu, calls)
