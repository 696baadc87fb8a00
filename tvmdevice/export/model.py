"""What the C of an exported model is made from: its io, its numbered calls, and the context every
``emit_*`` piece reads (:class:`Context`): names, buffers and the device slots of the compiled module."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..aot.bind import STORAGE_ALIGNMENT, DeviceStorage, device_storage
from ..aot.memory_plan import tensor_key
from ..aot.schedule import HOST
from ..headers import model_c_name
from ..ir import ABSENT
from .devices import ExportDevice

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule

__all__ = ["Call", "Context", "GeneratedModel", "Io", "POOL_ALIGNMENT", "DEVICE_ALIGNMENT", "identifier"]

#: Alignment of the host pool and of every constant (the plan's buffers are 16-aligned offsets into it).
POOL_ALIGNMENT = 16
#: Alignment asked of a separate memory's AllocDataSpace: the executor's (binding's).
DEVICE_ALIGNMENT = STORAGE_ALIGNMENT


@dataclass(frozen=True)
class Io:
    """One model input or output as the interface names it."""

    member: str
    tensor: int
    dtype: str
    shape: tuple[int, ...]
    nbytes: int
    scale: float | None
    zero_point: int | None

    def macro(self, prefix: str) -> str:
        return f"{prefix.upper()}_{self.member.upper()}_SIZE"


@dataclass
class GeneratedModel:
    """The generated files (relative path -> text) and what metadata.json says about them."""

    name: str
    prefix: str
    files: dict[str, str] = field(default_factory=dict)
    inputs: list[Io] = field(default_factory=list)
    outputs: list[Io] = field(default_factory=list)
    #: what each numbered call is, for tvmgen_<model>_last_error() and metadata.json
    calls: list[dict] = field(default_factory=list)
    constant_bytes: int = 0
    params_bytes: int = 0
    pool_bytes: dict[str, int] = field(default_factory=dict)
    #: the model keeps operator state across runs (TFLite variable tensors): it has a reset entry point
    stateful: bool = False


def identifier(text: str, fallback: str) -> str:
    """``text`` as a lower-case C identifier part (``fallback`` when it has no letter or digit)."""
    ident = re.sub(r"[^0-9A-Za-z_]+", "_", text).strip("_").lower()
    if not ident or ident[0].isdigit():
        ident = f"{fallback}_{ident}" if ident else fallback
    return ident


def model_io(module: "CompiledModule", tensors: tuple[int, ...], kind: str) -> list[Io]:
    """The interface members of ``tensors`` (the graph's inputs or outputs), unique C names."""
    seen: set[str] = set()
    found = []
    for k, t in enumerate(tensors):
        tensor = module.graph.tensors[t]
        member = identifier(tensor.name, f"{kind}{k}")
        if member in seen:
            member = f"{member}_{k}"
        seen.add(member)
        q = tensor.quant
        scale = float(q.scale.reshape(-1)[0]) if q is not None and q.scale.size == 1 else None
        zp = int(q.zero_point.reshape(-1)[0]) if q is not None and q.zero_point.size == 1 else None
        found.append(Io(member, t, np.dtype(tensor.dtype).name, tuple(int(d) for d in tensor.shape), tensor.nbytes,
                        scale, zp))
    return found


@dataclass(frozen=True)
class Call:
    """One numbered call of the generated C: its index in the table of calls and its symbolic name."""

    index: int
    name: str

    def marked(self, statement: str, indent: str = "  ") -> str:
        """``statement`` (its lines, each ending in a newline) between the call's profiling marks: the
        firmware profiler's ``TVMD_FW_MARK`` ``2 * index`` before it and ``2 * index + 1`` after it,
        which compile to nothing unless the export is built with ``TVMD_FW_PROFILE``."""
        return (f"{indent}TVMD_FW_MARK({2 * self.index});\n{statement}"
                f"{indent}TVMD_FW_MARK({2 * self.index + 1});\n")


class Context:
    """One export's names, numbered calls and buffer expressions, shared by the ``emit_*`` pieces."""

    def __init__(self, module: "CompiledModule", name: str, devices: list[ExportDevice], external_pools: bool):
        self.module, self.graph, self.devices = module, module.graph, devices
        self.external_pools = external_pools
        self.name = name
        self.m = model_c_name(name)
        self.p = f"tvmgen_{self.m}"
        self.by_name = {d.name: d for d in devices}
        self.structs = [d for d in devices if d.has_struct]
        self.host_pool = module.plan.pools[HOST]
        #: each separate memory's slots, as binding allocates them
        self.storage: dict[str, DeviceStorage] = device_storage(module)
        self.out = GeneratedModel(name, self.p)
        self.out.inputs = model_io(module, module.graph.inputs, "input")
        self.out.outputs = model_io(module, module.graph.outputs, "output")
        self.call_names: list[str] = []
        self.kernels: set[str] = set()

    # ------------------------------------------------------------------ calls
    def call(self, what: str, label: str, **info: object) -> Call:
        """Number a call of ``what``; ``label`` names it in C (``<PREFIX>_CALL_<LABEL>``)."""
        self.out.calls.append({"call": what, **info})
        base = f"{self.p.upper()}_CALL_{identifier(label, 'call').upper()}"
        name, k = base, 2
        while name in self.call_names:
            name, k = f"{base}_{k}", k + 1
        self.call_names.append(name)
        return Call(len(self.out.calls) - 1, name)

    # ------------------------------------------------------------- buffers
    def slots(self, device: ExportDevice) -> DeviceStorage:
        return self.storage.get(device.name, DeviceStorage((), ()))

    def device_address(self, device: ExportDevice, slot: int) -> str:
        return f"{self.p}_{device.c_name}_addr[{slot}]"

    def planned(self, key: tuple) -> str:
        """The buffer expression of a planned buffer (``key`` as the memory plan names it)."""
        memory = key[2]
        if memory == HOST:
            return f"(void*)(pool + {self.host_pool.offsets[key]})"
        block = self.module.plan.pools[memory].block_of[key]
        return f"(void*)(uintptr_t){self.device_address(self.by_name[memory], block)}"

    def host_pointer(self, tensor: int) -> str:
        key = tensor_key(self.module.schedule.source(tensor), HOST)
        return f"(pool + {self.host_pool.offsets[key]})"

    def buffer(self, tensor: int, memory: str, constant: str | None) -> str:
        """A kernel buffer expression for ``tensor`` read or written in ``memory`` (``constant``: its C
        array when it is a constant)."""
        if tensor == ABSENT:
            return "NULL"
        if self.graph.tensors[tensor].is_constant:
            if memory == HOST:
                return f"(void*){constant}"
            device = self.by_name[memory]
            return f"(void*)(uintptr_t){self.device_address(device, self.slots(device).constant_slot(tensor))}"
        return self.planned(tensor_key(self.module.schedule.source(tensor), memory))
