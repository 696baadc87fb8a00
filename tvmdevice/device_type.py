"""What a plugin registers: :class:`DeviceType`, one record per kind of device."""

from __future__ import annotations

import enum
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from .layout import Layout
from .names import struct_type, validate_device_name
from .options import TargetOption

__all__ = ["MemoryKind", "DeviceType", "PLUGIN_API_VERSION", "SUPPORTED_PLUGIN_API_VERSIONS"]

#: The plugin API version this core implements.
PLUGIN_API_VERSION = 1
#: Plugin API versions this core accepts.
SUPPORTED_PLUGIN_API_VERSIONS: frozenset[int] = frozenset({1})


class MemoryKind(str, enum.Enum):
    """Where a device's data space lives."""

    #: Device memory is host memory: pointers are host pointers.
    HOST = "host"
    #: Device memory is separate (an NPU's SRAM): pointers are device addresses
    #: that the host must not dereference; data moves with CopyDataFromTo.
    SEPARATE = "separate"


@dataclass(frozen=True)
class DeviceType:
    """A kind of device a plugin provides.

    :param name: TVM target kind or external compiler name (``"cmsis-nn"``).
    :param aliases: other names accepted in target strings (``("cmsis",)``).
    :param api_version: the plugin API version the plugin was written for.
    :param layout: the ``tvm_device_<name>_t`` struct the framework allocates.
    :param options: target options the device accepts, typed, with defaults.
    :param memory: :class:`MemoryKind` of its data space.
    :param operators: operator types (TFLite names) it can run, subject to the
        per-operator parameter check of ``tvmdevice_check_operator``: its kernel keys
        (:func:`tvmdevice.ops.kernel_key`).  Any :class:`collections.abc.Set` is kept as given, so a
        device whose claims come from its compiler (one that ``compiles_partitions``) may pass a
        lazy set that reads them on first use (discovery does not read it); other iterables
        become a frozenset.
    :param is_host: whether it can be the host (last entry) of a target.
    :param description: one line shown by ``tvmdevice plugins``.
    :param folds_pad: its CONV_2D and DEPTHWISE_CONV_2D kernels read any window padding from the op
        data (``pad_h``/``pad_w`` before the image, the rest implied by the output size), so placement
        may fold a PAD or PADV2 feeding one of its convolutions into the convolution's window
        (:mod:`tvmdevice.aot.fold`): its ``tvmdevice_prepare_operator`` then receives the convolution
        reading the PAD's input, with the PAD's borders added to its padding, and may refuse it.
    :param compiles_partitions: its compiler takes whole subgraphs: placement groups the consecutive
        operators that pass its ``tvmdevice_check_operator`` into partitions
        (:mod:`tvmdevice.partition`) and asks its ``tvmdevice_prepare_partition`` for one call per
        partition, instead of ``tvmdevice_prepare_operator`` per operator.
    """

    name: str
    layout: Layout
    aliases: tuple[str, ...] = ()
    api_version: int = PLUGIN_API_VERSION
    options: tuple[TargetOption, ...] = ()
    memory: MemoryKind = MemoryKind.HOST
    operators: AbstractSet[str] = frozenset()
    is_host: bool = False
    description: str = ""
    folds_pad: bool = False
    compiles_partitions: bool = False

    def __post_init__(self) -> None:
        validate_device_name(self.name)
        for alias in self.aliases:
            validate_device_name(alias)
        if not isinstance(self.layout, Layout):
            raise TypeError(f"device type {self.name!r}: layout must be a tvmdevice.Layout")
        if self.layout.c_type != struct_type(self.name):
            raise ValueError(
                f"device type {self.name!r}: layout is named {self.layout.c_type!r}, "
                f"expected {struct_type(self.name)!r}"
            )
        keys = [o.name for o in self.options]
        if len(set(keys)) != len(keys):
            raise ValueError(f"device type {self.name!r}: duplicate option names in {keys}")
        if not isinstance(self.operators, AbstractSet):
            object.__setattr__(self, "operators", frozenset(self.operators))
        object.__setattr__(self, "memory", MemoryKind(self.memory))

    @property
    def names(self) -> tuple[str, ...]:
        """The name followed by the aliases."""
        return (self.name, *self.aliases)

    def option(self, key: str) -> TargetOption | None:
        for o in self.options:
            if o.name == key:
                return o
        return None

    def default_options(self) -> dict[str, Any]:
        return {o.name: o.default for o in self.options}

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "aliases": list(self.aliases),
            "api_version": self.api_version,
            "memory": self.memory.value,
            "is_host": self.is_host,
            "operators": sorted(self.operators),
            "options": [o.to_json() for o in self.options],
            "layout": self.layout.to_json(),
            "description": self.description,
            "folds_pad": self.folds_pad,
            "compiles_partitions": self.compiles_partitions,
        }
