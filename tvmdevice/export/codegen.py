"""The C of an exported model: the interface header, the constants and the run function.

What :func:`generate` writes follows TVM's AOT executor interface
(``tvmgen_<model>.h``: size macros, ``struct tvmgen_<model>_inputs`` and
``_outputs`` with a ``void*`` per tensor, ``struct tvmgen_<model>_devices``
with a pointer per device that has a C Device API, ``_workspace_pools`` when
the caller provides the pools) with the seed's lifecycle contract:

* ``tvmgen_<model>_open(devices)``: Init (+ the device's configure function)
  and Open each device; separate memories get their blocks
  (AllocDataSpace) and constants copied in;
* ``tvmgen_<model>_run(inputs, outputs[, pools], devices)``: the inputs
  copied into the plan, Activate each device, every step of the schedule
  (kernels with their device's handle last, copies between memories),
  Deactivate each device (also after a failure), the outputs copied out;
* ``tvmgen_<model>_close(devices)``: every block freed, Close and Destroy.

Every status is checked and the first failing one returned; after any
failure each device stays closable, and ``tvmgen_<model>_last_error()`` names
the failed call from the export's table of calls (``metadata.json`` has the
same table).  Constants and params are ``const`` data (flash on a
microcontroller); the host pool is a static aligned array in ``.bss.noinit``.

The pieces, each emitting one part: :mod:`.emit_header` (the interface),
:mod:`.emit_constants` (constants and params), :mod:`.emit_run` (the run
function), :mod:`.emit_lifecycle` (open, activate, teardown, close) and
:mod:`.emit_source` (the run file put together); :mod:`.model` holds what
they share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..aot.schedule import HOST
from . import layout as L
from .devices import ExportDevice
from .emit_constants import ConstantTable, emit_constants_file, emit_constants_header
from .emit_header import emit_interface_header
from .emit_source import emit_model_source
from .model import POOL_ALIGNMENT, Context, GeneratedModel, Io

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule

__all__ = ["GeneratedModel", "Io", "generate", "POOL_ALIGNMENT"]


def generate(module: "CompiledModule", name: str, devices: list[ExportDevice], *,
             external_pools: bool = False) -> GeneratedModel:
    """The C of ``module`` exported as model ``name``: files keyed by their path in the export."""
    from ..headers import devices_header

    ctx = Context(module, name, devices, external_pools)
    constants = ConstantTable(ctx)
    source = emit_model_source(ctx, constants)  # first: it names the constants and the calls
    out, p = ctx.out, ctx.p
    out.stateful = bool(module.schedule.states)
    out.files[f"{L.CODEGEN_INCLUDE}/{p}.h"] = emit_interface_header(ctx)
    out.files[f"{L.CODEGEN_INCLUDE}/{p}_devices.h"] = devices_header(
        name, [module.target.entries[d.entry].device_type for d in ctx.structs])
    out.files[f"{L.CODEGEN_SRC}/{p}_constants.h"] = emit_constants_header(ctx, constants)
    out.files[f"{L.CODEGEN_SRC}/{p}_constants.c"] = emit_constants_file(ctx, constants)
    out.files[f"{L.CODEGEN_SRC}/{p}.c"] = source
    out.pool_bytes = {HOST: module.plan.pools[HOST].size,
                      **{mem: pool.size for mem, pool in module.plan.pools.items() if mem != HOST}}
    return out
