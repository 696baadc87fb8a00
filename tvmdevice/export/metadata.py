"""``metadata.json`` of an export: MLF-style sizes, the io, the target and placement, the calls, the build."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..aot.schedule import HOST
from . import layout as L
from .codegen import GeneratedModel, Io
from .devices import ExportDevice

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule

__all__ = ["metadata"]


def _io(io: Io) -> dict[str, Any]:
    return {"name": io.member, "tensor": io.tensor, "dtype": io.dtype, "shape": list(io.shape), "size": io.nbytes,
            "scale": io.scale, "zero_point": io.zero_point}


def metadata(module: "CompiledModule", generated: GeneratedModel, devices: list[ExportDevice],
             build: dict[str, Any], *, external_pools: bool, mcpu: str, model_file: str | None, version: str,
             created: str) -> dict[str, Any]:
    """The metadata of one export (see :mod:`tvmdevice.export.layout`)."""
    pools = {}
    for memory, pool in module.plan.pools.items():
        pools[memory] = {"bytes": pool.size, "activations": pool.activation_bytes, "scratch": pool.scratch_bytes,
                         "blocks": list(pool.blocks), "external": external_pools and memory == HOST,
                         "memory": "host RAM" if memory == HOST else f"{memory} device memory"}
    io_bytes = sum(io.nbytes for io in (*generated.inputs, *generated.outputs))
    return {
        "format": "tvmdevice-mlf", "format_version": L.FORMAT_VERSION, "tvmdevice_version": version,
        "export_datetime": created, "model_name": generated.name, "prefix": generated.prefix,
        "target": str(module.target), "mcpu": mcpu, "model": model_file,
        "memory": {"pools": pools, "constants": generated.constant_bytes, "params": generated.params_bytes,
                   "io": io_bytes,
                   "device_constants": {m: p.constant_bytes for m, p in module.plan.pools.items() if m != HOST},
                   "buffers": [a.to_json() for a in module.plan.allocations()]},
        "inputs": [_io(io) for io in generated.inputs],
        "outputs": [_io(io) for io in generated.outputs],
        "stateful": generated.stateful,
        "devices": [{"name": d.name, "c_name": d.c_name, "struct": d.struct if d.has_struct else None,
                     "separate_memory": d.separate, "configure": d.configure,
                     "memories": [m.to_json() for m in d.memories]} for d in devices],
        "placement": module.placement.to_json(),
        "calls": generated.calls,
        "build": build,
    }
