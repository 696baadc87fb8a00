"""What a device contributes to an exported model: :class:`DeviceSources`.

A device's ``tvmdevice_export_sources`` hook returns one for each CPU a model
is exported for.  The exporter copies the files it names into the export's
``devices/<name>/`` folder, writes the generated headers beside them and
builds the sources into the model library with the given defines and flags:
the same portable C99 the device's host extension compiles.  Each CPU builds
only the sources the model's calls reach there, and the export keeps only
those and the headers they include (:mod:`tvmdevice.export.select`).

The C side of the contract (names use the device's C name ``<Name>``, e.g.
``CmsisNn`` for ``cmsis-nn``; ``tvm_device_<name>_t`` is its generated struct):

* ``lifecycle``: the sources define ``int32_t TVMDevice<Name>{Init, Open,
  Activate, Deactivate, Close, Destroy}(tvm_device_<name>_t*)``; the
  generated ``tvmgen_<model>_open/run/close`` call them.
* ``configure``: the name of a function ``int32_t f(tvm_device_<name>_t*)``
  defined in ``code``, called right after Init: it sets what the device's
  Python init hook sets from the target options (capacities, clocks...).
* ``memory`` (devices with separate memory): the sources define
  ``TVMDevice<Name>AllocDataSpace(dev, uint64_t nbytes, uint64_t alignment,
  uint64_t* out_addr)``, ``TVMDevice<Name>FreeDataSpace(dev, uint64_t addr)``,
  ``TVMDevice<Name>CopyToDevice(dev, uint64_t dst, const void* src, uint64_t
  nbytes)`` and ``TVMDevice<Name>CopyFromDevice(dev, void* dst, uint64_t src,
  uint64_t nbytes)``, all returning a ``tvmd_status_t`` and the copies
  complete when they return.  Kernel buffers are then device addresses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DeviceSources", "StaticMemory", "EXPORT_CPUS", "DEFAULT_MCPU"]

#: The CPUs an export builds for (names of :data:`tvmdevice.firmware.CPUS`).
EXPORT_CPUS: tuple[str, ...] = ("host", "cortex-m55", "cortex-m4", "cortex-m3")

#: The ``-mcpu`` that ``tvmdevice export`` and ``module.export`` compile for when the target leaves it empty.
DEFAULT_MCPU = "cortex-m55"


@dataclass(frozen=True)
class StaticMemory:
    """A buffer a device's exported C defines itself, outside the memory plan, in a linker section of its own.

    For memory that is the device's rather than the host pool's: an NPU's fast scratch (which a board
    places in the NPU's SRAM with its linker script) or a functional model's internal memory (which a
    board with the real device does not link at all).  The device's ``code`` defines it; the export
    reports it (``metadata.json``'s ``devices[].memories``, ``tvmdevice run --json``'s ``device_memories``)
    beside the planned pools, never inside them.

    :param name: what it is, a short identifier (``npu_fast_scratch``).
    :param section: the linker input section that holds it (``.bss.tvmd_npu_fast``).
    :param size: its bytes, sized for this model.
    :param doc: one line: what it holds and where a board puts it.
    """

    name: str
    section: str
    size: int
    doc: str = ""

    def to_json(self) -> dict:
        return {"name": self.name, "section": self.section, "bytes": self.size, "doc": self.doc}


@dataclass(frozen=True)
class DeviceSources:
    """The C a device contributes to an exported model for one CPU.

    :param sources: C files compiled into the model library.
    :param include_dirs: folders the sources include from (copied whole).
    :param headers: generated headers, file name -> text (written beside the sources).
    :param defines: preprocessor definitions, name -> value (``None``: defined without a value).
    :param cflags: further compiler flags for this CPU.
    :param lifecycle: the sources define the six ``TVMDevice<Name><Step>`` functions.
    :param memory: the sources define the separate-memory functions (see the module doc).
    :param configure: a function of ``code`` called after Init, or ``None``.
    :param code: generated C source for this export (e.g. ``configure`` with the options baked in).
    :param memories: the buffers ``code`` defines outside the memory plan (:class:`StaticMemory`).
    """

    sources: tuple[Path, ...] = ()
    include_dirs: tuple[Path, ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict)
    defines: Mapping[str, str | None] = field(default_factory=dict)
    cflags: tuple[str, ...] = ()
    lifecycle: bool = False
    memory: bool = False
    configure: str | None = None
    code: str = ""
    memories: tuple[StaticMemory, ...] = ()
