"""``export``: a compiled model written as a Model Library Format directory, atomically.

The directory is assembled beside its destination and renamed into place only
when every file is written, so a failed export leaves nothing half-written:
``DIR`` is then as it was (absent, or the previous export).  An existing
``DIR`` is replaced only when it is an earlier export (it has ``metadata.json``)
or empty.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..aot.schedule import HOST
from ..errors import InvalidArgumentError
from ..firmware.build import compiler_flags
from ..firmware.cpus import get_cpu
from ..firmware.linker import CONSTANTS_REGIONS, linker_script
from ..firmware.platform import PLATFORM_DIR, platform_sources
from ..headers import device_header, model_c_name
from . import layout as L
from .codegen import GeneratedModel, generate
from .devices import ExportDevice, export_devices
from .fit import Budget, Needs
from .makefile import makefile
from .runner import RUNNER, runner_source
from .select import ship_used_sources
from .sources import DEFAULT_MCPU, EXPORT_CPUS

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule

__all__ = ["export", "compiled_mcpu"]

_HEADER_SUFFIXES = (".h", ".inc")
_CORTEXM_LDFLAGS = ("-nostartfiles", "--specs=nano.specs", "-Wl,--gc-sections")


def compiled_mcpu(module: "CompiledModule", mcpu: str | None = None) -> str:
    """The ``-mcpu`` ``module`` was compiled for: the value of every device that declares that option.

    Export only reads a compiled module: every choice is made when it is compiled.
    :raises InvalidArgumentError: a device leaves ``-mcpu`` empty (compiled for the host), or it differs
        from ``mcpu`` (the message says how to compile for it).
    """
    declared = {e.kind: str(e.options.get("mcpu") or "") for e in module.target.entries
                if "mcpu" in {o.name for o in e.device_type.options}}
    how = (f"compile it for the CPU (tvmdevice.compile(..., mcpu={mcpu or DEFAULT_MCPU!r}), or -mcpu= in the "
           "target) or export with module.export / tvmdevice export, which compile for --mcpu")
    empty = sorted(k for k, v in declared.items() if not v)
    if empty:
        raise InvalidArgumentError(f"{module.target} leaves -mcpu empty on {', '.join(empty)}: the module is "
                                   f"compiled for the host, not for firmware; {how}")
    other = sorted(f"{k} -mcpu={v}" for k, v in declared.items() if mcpu and v != mcpu)
    if other:
        raise InvalidArgumentError(f"the module is compiled for {', '.join(other)}, not for {mcpu}; {how}")
    return next(iter(declared.values()), mcpu or DEFAULT_MCPU)


def export(module: "CompiledModule", directory: "str | Path", *, name: str | None = None,
           external_pools: bool = False, mcpu: str | None = None, source_model: bytes | None = None,
           constants_region: str = "flash", budget: Budget | None = None) -> Path:
    """Write ``module`` as C into ``directory`` (TVM's Model Library Format); return the directory.

    :param name: the model's C name part (``tvmgen_<name>_run``); default: the graph's name.
    :param external_pools: the caller provides the host pool (``struct tvmgen_<name>_workspace_pools``).
    :param mcpu: the ``-mcpu`` the module must be compiled for (default: whichever it is compiled for; see
        :func:`compiled_mcpu`).
    :param source_model: the ``.tflite`` bytes to keep as ``src/<name>.tflite`` (default: the module's).
    :param constants_region: where the Cortex-M images put the model's constant tensors: ``flash`` with
        the code, or ``external``: the board's larger memory where it has one (the AN547's QSPI flash;
        :func:`tvmdevice.firmware.linker.linker_script`).
    :param budget: the board's memories: the plan is checked against them before anything is written
        (:mod:`.fit`).
    :raises ModelDoesNotFitError: the plan needs more than ``budget`` has (the message says what and by
        how much).
    :raises NotSupportedError: an operator or device has no C to export (the message names it).
    :raises InvalidArgumentError: ``directory`` exists and is neither empty nor an earlier export, or
        cannot be written (the message names ``directory``, never the staging directory beside it); the
        module is not compiled for ``mcpu`` (:func:`compiled_mcpu`).
    """
    dest = Path(directory)
    model_name = name or module.graph.name or "default"
    if not model_c_name(model_name):
        raise InvalidArgumentError(f"model name {model_name!r} has no letters or digits for C symbols")
    if dest.exists() and not (dest.is_dir() and (not any(dest.iterdir()) or (dest / L.METADATA).is_file())):
        raise InvalidArgumentError(f"{dest} exists and is not an earlier export (no {L.METADATA}); "
                                   "export into a new or empty directory")
    if source_model is None:
        source_model = module.source_model
    mcpu = compiled_mcpu(module, mcpu)
    if constants_region not in CONSTANTS_REGIONS:
        raise InvalidArgumentError(f"constants region {constants_region!r}: expected one of "
                                   f"{', '.join(CONSTANTS_REGIONS)}")
    devices = export_devices(module)  # none when every operator is a view: run only copies
    generated = generate(module, model_name, devices, external_pools=external_pools)
    if budget is not None:
        budget.check(Needs(generated.constant_bytes, generated.params_bytes, module.plan.pools[HOST].size,
                           sum(io.nbytes for io in (*generated.inputs, *generated.outputs)),
                           external_constants=constants_region == "external",
                           device_memories=tuple((m.name, m.size) for d in devices for m in d.memories)))
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    except OSError as exc:
        raise InvalidArgumentError(f"cannot write the export {str(dest)!r}: {exc.strerror or exc}") from None
    try:
        _write(staging, module, generated, devices, external_pools, mcpu, source_model, constants_region)
        _replace(staging, dest)
    except OSError as exc:
        # the staging directory beside it is ours, not the user's: the error names their path
        shutil.rmtree(staging, ignore_errors=True)
        raise InvalidArgumentError(f"cannot write the export {str(dest)!r}: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return dest


def _replace(staging: Path, dest: Path) -> None:
    if not dest.exists():
        os.replace(staging, dest)
        return
    old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
    os.replace(dest, old)
    try:
        os.replace(staging, dest)
    except BaseException:
        os.replace(old, dest)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _put(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _copy_headers(src: Path, dst: Path) -> None:
    for f in sorted(src.rglob("*")):
        if f.is_file() and f.suffix in _HEADER_SUFFIXES:
            target = dst / f.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, target)


def _device_files(root: Path, module: "CompiledModule", d: ExportDevice) -> dict[str, list[str]]:
    """Copy ``d``'s C into ``devices/<d>/``; its sources per CPU, relative to the export."""
    base = L.device_dir(d.c_name)
    per_cpu: dict[str, list[str]] = {}
    for cpu, s in d.sources.items():
        files = []
        for src in s.sources:
            rel = f"{base}/src/{Path(src).name}"
            if not (root / rel).exists():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, root / rel)
            files.append(rel)
        for folder in s.include_dirs:
            _copy_headers(Path(folder), root / base / "src")  # beside the sources: private headers stay private
        for header, text in s.headers.items():
            _put(root, f"{base}/include/{header}", text)
        if s.code:
            rel = f"{base}/src/{d.c_name}_export.c"
            _put(root, rel, s.code)
            files.append(rel)
        per_cpu[cpu] = files
    struct_header = f"{base}/include/tvm_device_{d.c_name}.h"
    if d.has_struct and not (root / struct_header).exists():
        _put(root, struct_header, device_header(module.target.entries[d.entry].device_type))
    return per_cpu


def _build(root: Path, generated: GeneratedModel, devices: list[ExportDevice],
           per_device: dict[str, dict[str, list[str]]]) -> dict[str, Any]:
    """The build lists per CPU (sources, include folders, defines, flags), all relative to the export."""
    model_sources = sorted(p for p in generated.files if p.endswith(".c"))
    includes = [L.CODEGEN_INCLUDE, L.CODEGEN_SRC, L.RUNTIME_INCLUDE, L.PLATFORM,
                *(f"{L.device_dir(d.c_name)}/include" for d in devices)]
    cpus: dict[str, Any] = {}
    for cpu_name in EXPORT_CPUS:
        cpu = get_cpu(cpu_name)
        defines: dict[str, str | None] = {}
        cflags = compiler_flags(cpu)
        for d in devices:
            s = d.sources[cpu_name]
            defines.update(s.defines)
            cflags += [f for f in s.cflags if f not in cflags]
        platform = [f"{L.PLATFORM}/{p.name}" for p in platform_sources(cpu)]
        ldflags = ["-lm"]
        if not cpu.is_host:
            ldflags = [*_CORTEXM_LDFLAGS, f"-T{L.PLATFORM}/{cpu_name}.ld", "-lm"]
        cpus[cpu_name] = {
            "cc": "cc" if cpu.is_host else "arm-none-eabi-gcc",
            "ar": "ar" if cpu.is_host else "arm-none-eabi-ar",
            "sources": model_sources + [f for d in devices for f in per_device[d.name][cpu_name]],
            "platform_sources": platform,
            "include_dirs": includes, "defines": defines, "cflags": cflags, "ldflags": ldflags,
        }
    return {"runner": RUNNER, "cpus": cpus}


def _write(root: Path, module: "CompiledModule", generated: GeneratedModel, devices: list[ExportDevice],
           external_pools: bool, mcpu: str, source_model: bytes | None, constants_region: str) -> None:
    from .. import __version__
    from .metadata import metadata

    for rel, text in generated.files.items():
        _put(root, rel, text)
    _copy_headers(Path(__file__).resolve().parent.parent / "include", root / L.RUNTIME_INCLUDE)
    (root / L.PLATFORM).mkdir(parents=True, exist_ok=True)
    for f in sorted(PLATFORM_DIR.iterdir()):
        if f.suffix in (".c", ".h"):
            shutil.copyfile(f, root / L.PLATFORM / f.name)
    for cpu_name in EXPORT_CPUS:
        cpu = get_cpu(cpu_name)
        if not cpu.is_host:
            _put(root, f"{L.PLATFORM}/{cpu_name}.ld", linker_script(cpu, constants=constants_region))
    per_device = {d.name: _device_files(root, module, d) for d in devices}
    runner = runner_source(generated, devices, external_pools)
    _put(root, RUNNER, runner)
    build = _build(root, generated, devices, per_device)
    build["constants_region"] = constants_region
    # each CPU builds only the device C the model reaches there; the rest is not shipped
    ship_used_sources(root, {d.name: L.device_dir(d.c_name) for d in devices}, generated.calls,
                      [*(text for rel, text in generated.files.items() if rel.endswith(".c")), runner], build["cpus"])
    _put(root, L.MAKEFILE, makefile(generated.prefix, build))
    model_file = None
    if source_model is not None:
        model_file = f"src/{model_c_name(generated.name)}.tflite"
        (root / "src").mkdir(exist_ok=True)
        (root / model_file).write_bytes(source_model)
    meta = metadata(module, generated, devices, build, external_pools=external_pools, mcpu=mcpu,
                    model_file=model_file, version=__version__,
                    created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    _put(root, L.METADATA, json.dumps(meta, indent=2) + "\n")
