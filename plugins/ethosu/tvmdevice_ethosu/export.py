"""The ethos-u C device in an exported model: what ``tvmdevice_export_sources`` returns.

An export links the plugin's portable C (``csrc/``: the lifecycle, the
partition kernel, the launch function and behind it the functional model;
the same files the host extension compiles, of which the export keeps those
the model reaches) and the headers the build generates from the
declarations (``tvm_device_ethos_u.h``, ``tvmd_ethos_u_params.h``).

Each partition is one call of ``tvmd_ethosu_partition``: its params hold the
command stream and Vela's read-only data as ``const`` 16-byte-aligned arrays
(flash: the NPU reads them in place), and its scratch buffer, in the planned
pool, holds Vela's scratch (region 1), its fast scratch (region 2) and the
functional model's working memory.  The kernel builds the region base-address
table and sizes and calls ``tvmd_ethosu_launch``, which has the shape of
Arm's ``ethosu_invoke_v3``: a board replaces ``csrc/ethosu_launch.c`` by a
call of the driver (docs/export.md).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

from tvmdevice import headers
from tvmdevice.export import EXPORT_CPUS, DeviceSources
from tvmdevice.names import c_name

from .device import DEVICE_TYPE, PARAMS

__all__ = ["C_DIR", "PARAMS_HEADER", "generated_headers", "export_sources"]

#: The plugin's portable C: every ``.c`` is a source, every ``.h`` a header of the export.
C_DIR = Path(str(files("tvmdevice_ethosu") / "csrc"))
#: The generated params header, as ``csrc/ethosu_kernel.c`` includes it.
PARAMS_HEADER = f"tvmd_{c_name(DEVICE_TYPE.name)}_params.h"


def generated_headers() -> dict[str, str]:
    """The headers the build generates from the declarations (``tvmdevice.build.generate_headers``), as text."""
    guard = PARAMS_HEADER.upper().replace(".", "_") + "_"
    return {
        f"tvm_device_{c_name(DEVICE_TYPE.name)}.h": headers.device_header(DEVICE_TYPE),
        PARAMS_HEADER: headers.structs_header(
            guard, PARAMS, doc="Kernel params structs, declared in tvmdevice_ethosu.params."),
    }


def export_sources(options: dict[str, Any], cpu: str) -> DeviceSources | None:
    """What an ethos-u device contributes to a model exported for ``cpu`` (``None`` for an unknown CPU)."""
    if cpu not in EXPORT_CPUS:
        return None
    return DeviceSources(
        sources=tuple(sorted(C_DIR.glob("*.c"))),
        include_dirs=(C_DIR,),  # the hand-written headers, kept beside the sources (private)
        headers=generated_headers(),
        lifecycle=True,
    )
