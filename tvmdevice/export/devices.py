"""The devices an export links: each used device's C, per CPU, and how generated code calls it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import NotSupportedError
from ..names import c_name, camel_name, struct_type
from .sources import EXPORT_CPUS, DeviceSources, StaticMemory

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule

__all__ = ["ExportDevice", "export_devices"]


@dataclass(frozen=True)
class ExportDevice:
    """One device an exported model runs operators on.

    :ivar name: the device name (``cmsis-nn``).
    :ivar entry: its index in the target.
    :ivar separate: it has memory of its own (kernel buffers are device addresses).
    :ivar sources: its :class:`DeviceSources` per CPU of :data:`EXPORT_CPUS`.
    """

    name: str
    entry: int
    separate: bool
    sources: dict[str, DeviceSources]

    @property
    def c_name(self) -> str:
        """``cmsis_nn``: the ``tvmgen_<model>_devices`` member and file name part."""
        return c_name(self.name)

    @property
    def has_struct(self) -> bool:
        """The device has a C struct and lifecycle (a ``tvmgen_<model>_devices`` member)."""
        return self.sources["host"].lifecycle

    @property
    def struct(self) -> str:
        """``tvm_device_cmsis_nn_t``."""
        return struct_type(self.name)

    def symbol(self, step: str) -> str:
        """``TVMDeviceCmsisNn<step>``."""
        return f"TVMDevice{camel_name(self.name)}{step}"

    @property
    def configure(self) -> str | None:
        return self.sources["host"].configure

    @property
    def memories(self) -> tuple[StaticMemory, ...]:
        """The buffers its C keeps outside the memory plan (every CPU gets the same ones)."""
        return tuple(self.sources["host"].memories)

    @property
    def headers(self) -> list[str]:
        """The generated headers the model's C includes (every CPU gets the same ones)."""
        return list(self.sources["host"].headers)

    @property
    def header_texts(self) -> dict[str, str]:
        """The generated headers, file name -> text."""
        return dict(self.sources["host"].headers)


def export_devices(module: "CompiledModule") -> list[ExportDevice]:
    """Every device of ``module``'s target that runs an operator, in target order, with its C.

    :raises NotSupportedError: a device that runs operators contributes no C
        for some CPU (the message names the device, the CPU and its operators).
    """
    from ..device_type import MemoryKind

    used = sorted({p.entry for p in module.placement.ops if not p.is_view})
    found = []
    for index in used:
        entry = module.target.entries[index]
        # a partition's operators share its one call: each call once, in operator order
        calls = list({id(c): c for c in (module.prepared[p.op_index] for p in module.placement.ops
                                           if p.entry == index and p.op_index in module.prepared)}.values())
        per_cpu: dict[str, DeviceSources] = {}
        for cpu in EXPORT_CPUS:
            sources = module.registry.export_sources(entry.device_type, entry.options, cpu, calls)
            if sources is None:
                ops = [f"#{p.op_index} {p.op_type}" for p in module.placement.ops if p.entry == index]
                raise NotSupportedError(
                    f"device {entry.kind!r} cannot be exported for {cpu}: its plugin contributes no C "
                    f"(tvmdevice_export_sources), and it runs operator{'s' if len(ops) > 1 else ''} "
                    f"{', '.join(ops)}; compile for a target without it (e.g. drop {entry.kind!r}) to export")
            if not isinstance(sources, DeviceSources):
                raise NotSupportedError(f"device {entry.kind!r}: tvmdevice_export_sources returned "
                                        f"{type(sources).__name__}, not DeviceSources")
            per_cpu[cpu] = sources
        separate = entry.device_type.memory is MemoryKind.SEPARATE
        if separate and not (per_cpu["host"].memory and per_cpu["host"].lifecycle):
            raise NotSupportedError(f"device {entry.kind!r} has memory of its own but its exported C defines no "
                                    "lifecycle or memory functions (DeviceSources.lifecycle/memory)")
        found.append(ExportDevice(entry.kind, index, separate, per_cpu))
    return found
