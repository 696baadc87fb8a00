"""Building and running an export: natively for the host, under ``qemu-system-arm`` for Cortex-M.

:func:`build_export` compiles the export's own files (the lists in
``metadata.json``, as its Makefile does) with :func:`tvmdevice.firmware.build`,
cached under ``DIR/build/<cpu>``; :func:`run_export` writes the inputs to
files, runs the runner, reads the outputs and every device struct back, and
measures the image: flash (code, the model's constants and params, the rest)
and RAM (the planned pools, static RAM, the stack's high-water mark) from the
linked ELF, instructions per run counted under QEMU.  With ``profile=True`` (Cortex-M only) the
export is built with its profiling marks (``TVMD_FW_PROFILE``, a separate cached image) and the
measured run is reported call by call (:mod:`.profile`).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidArgumentError, KernelError
from ..firmware import Footprint, Image, RunResult, build, measure, run
from ..firmware.build import compiler_flags
from ..firmware.cpus import get_cpu
from ..firmware.elf import read_elf
from ..layout import Layout
from . import layout as L
from .profile import FirmwareProfile, profile_from_run
from .runner import EXIT_CODES, EXIT_USAGE

__all__ = ["ExportRun", "load_metadata", "build_export", "run_export", "run_export_frames", "is_export"]


def is_export(path: "str | Path") -> bool:
    """True when ``path`` is a directory written by ``tvmdevice export``."""
    p = Path(path)
    return p.is_dir() and (p / L.METADATA).is_file()


def load_metadata(directory: "str | Path") -> dict[str, Any]:
    """The export's ``metadata.json`` (``InvalidArgumentError`` when ``directory`` is not an export)."""
    path = Path(directory) / L.METADATA
    try:
        meta = json.loads(path.read_text())
    except FileNotFoundError:
        raise InvalidArgumentError(f"{directory} is not an export: it has no {L.METADATA} "
                                   "(make one with `tvmdevice export MODEL -t TARGET -o DIR`)") from None
    except (OSError, ValueError) as exc:
        raise InvalidArgumentError(f"{path} cannot be read: {exc}") from None
    if meta.get("format") != "tvmdevice-mlf" or meta.get("format_version") != L.FORMAT_VERSION:
        raise InvalidArgumentError(f"{path} is not a tvmdevice export of format version {L.FORMAT_VERSION}; "
                                   "export the model again with this version")
    return meta


#: The define that compiles the profiling marks into an export's run (tvmdevice_fw.h).
PROFILE_DEFINE = "TVMD_FW_PROFILE"


def build_export(directory: "str | Path", cpu: str, *, profile: bool = False) -> Image:
    """The runner of the export in ``directory`` built for ``cpu`` (reused when nothing changed).

    ``profile`` builds it with the profiling marks around each call of run (a Cortex-M CPU only: the
    host build has no instruction counter), as a separate image beside the unprofiled one.

    :raises ToolchainMissingError: the CPU's compiler is not installed (the message says what to install).
    :raises FirmwareBuildError: the build failed (the message has the compiler's first error).
    """
    root = Path(directory).resolve()
    meta = load_metadata(root)
    cpus = meta["build"]["cpus"]
    if cpu not in cpus:
        raise InvalidArgumentError(f"unknown cpu {cpu!r}: the export builds for {', '.join(cpus)}")
    b = cpus[cpu]
    if profile and get_cpu(cpu).is_host:
        raise InvalidArgumentError("profiling an export counts instructions under QEMU: choose a Cortex-M "
                                   f"--cpu ({', '.join(c for c in cpus if c != 'host')})")
    base = compiler_flags(get_cpu(cpu))
    extra = [f for f in b["cflags"] if f not in base]
    sources = [root / s for s in [*b["sources"], meta["build"]["runner"]]]
    defines = {**b["defines"], **({PROFILE_DEFINE: 1} if profile else {})}
    return build(sources, [root / d for d in b["include_dirs"]], cpu, root / "build" / cpu, defines,
                 name="runner-profile" if profile else "runner", extra_cflags=extra,
                 constants=meta["build"].get("constants_region", "flash"))


@dataclass(frozen=True)
class ExportRun:
    """What one run of an export produced and cost."""

    cpu: str
    #: the outputs of the last frame run (the only one for :func:`run_export`)
    outputs: list[np.ndarray]
    #: device name -> its struct's members as the measured run left them (power state...), its counters
    #: (members the device declares ``counter``) as their increase over that run
    devices: dict[str, dict[str, Any]]
    result: RunResult
    footprint: Footprint
    #: flash bytes of the model's constants and of its operators' params (from the image's symbols)
    model_constants: int
    model_params: int
    pools: dict[str, int] = field(default_factory=dict)
    #: the host pool's bytes after the run (``read_pool=True``), else None
    pool: bytes | None = None
    #: every frame's outputs, in the order the frames were given (:func:`run_export_frames`)
    frames: list[list[np.ndarray]] = field(default_factory=list)
    #: the measured run call by call (``profile=True``), else None
    profile: FirmwareProfile | None = None

    @property
    def instructions(self) -> int | None:
        """Instructions one warm run of the first frame executes (from the state open leaves), under QEMU;
        None on the host."""
        r = self.result
        if r.region_instructions is None or not r.regions:
            return None
        return r.region_instructions // r.regions

    def to_json(self) -> dict[str, Any]:
        fp = self.footprint
        stack = self.result.stack_used
        return {
            "cpu": self.cpu,
            "flash": {"code": fp.flash_code, "constants": self.model_constants, "params": self.model_params,
                      "other_constants": fp.flash_constants + fp.external_constants - self.model_constants
                      - self.model_params, "data": fp.flash_data, "total": fp.flash,
                      "external": fp.external_constants},
            "ram": {"pools": self.pools, "static": fp.ram, "stack": stack,
                    "total": fp.ram + (stack or 0)},
            "instructions": self.instructions,
            "devices": self.devices,
        }


def _symbol_bytes(image: Image, prefix: str) -> tuple[int, int, dict[str, int]]:
    """The bytes of the model's constants and operator params (``<prefix>_op<k>_...``, not ``_open``), and
    its host pool, from the image's symbols."""
    constants = params = 0
    pools: dict[str, int] = {}
    op = re.compile(rf"{re.escape(prefix)}_op\d+_")
    for sym in read_elf(image.path).symbols:
        if sym.name.startswith(f"{prefix}_constant_"):
            constants += sym.size
        elif op.match(sym.name):
            params += sym.size
        elif sym.name in (f"{prefix}_host_pool", "host_pool"):  # the model's, or the runner's (external)
            pools["host"] = sym.size
    return constants, params, pools


def _check_inputs(meta: dict[str, Any], inputs: Sequence[np.ndarray]) -> list[bytes]:
    specs = meta["inputs"]
    if len(inputs) != len(specs):
        raise InvalidArgumentError(f"the model takes {len(specs)} input{'s' if len(specs) != 1 else ''}, "
                                   f"got {len(inputs)}")
    data = []
    for spec, x in zip(specs, inputs):
        arr = np.asarray(x)
        if arr.dtype != np.dtype(spec["dtype"]) or list(arr.shape) != spec["shape"]:
            raise InvalidArgumentError(f"input {spec['name']!r} must be {spec['dtype']} {spec['shape']}, "
                                       f"got {arr.dtype.name} {list(arr.shape)}")
        data.append(np.ascontiguousarray(arr).tobytes())
    return data


def run_export(directory: "str | Path", cpu: str, inputs: Sequence[np.ndarray], *,
               timeout: float = 120.0, read_pool: bool = False, profile: bool = False) -> ExportRun:
    """Build (cached) and run the export in ``directory`` on ``cpu`` with ``inputs`` (one frame).

    The run starts from the state ``tvmgen_<model>_open`` leaves (a stateful model's reset state).

    :param read_pool: read the host pool back after the run (:attr:`ExportRun.pool`; exports with
        external pools only, where the runner owns the pool).
    :param profile: build with the profiling marks and report the measured run call by call
        (:attr:`ExportRun.profile`; Cortex-M only).
    :raises InvalidArgumentError: wrong inputs (count, dtype, shape) or not an export.
    :raises KernelError: the generated run returned a failing status (the message names the call).
    :raises ToolchainMissingError, FirmwareBuildError, FirmwareTimeoutError, FirmwareRunError: see
        :mod:`tvmdevice.firmware`.
    """
    return run_export_frames(directory, cpu, [inputs], timeout=timeout, read_pool=read_pool, profile=profile)


def run_export_frames(directory: "str | Path", cpu: str, frames: Sequence[Sequence[np.ndarray]], *,
                      timeout: float = 120.0, read_pool: bool = False, profile: bool = False) -> ExportRun:
    """Build (cached) and run the export in ``directory`` on ``cpu`` with each frame's inputs, in order.

    One process runs them all as one sequence: the first frame from the state ``tvmgen_<model>_open``
    leaves, each next one from the state the one before left (a model with operator state, LSTM or
    SVDF, gives TFLM's outputs for its frames 1 .. n; any other model each frame's own outputs).
    :attr:`ExportRun.frames` holds every frame's outputs; :attr:`ExportRun.instructions` is the first
    frame's run.  ``timeout`` bounds the whole process.  Raises as :func:`run_export`.
    """
    root = Path(directory).resolve()
    meta = load_metadata(root)
    if not frames:
        raise InvalidArgumentError("run_export_frames needs at least one frame of inputs")
    data = [_check_inputs(meta, inputs) for inputs in frames]
    image = build_export(root, cpu, profile=profile)
    with tempfile.TemporaryDirectory(prefix="tvmd-export-run-") as tmp:
        work = Path(tmp)
        names = [f"in{k}.bin" for k in range(len(meta["inputs"]))]
        for k, name in enumerate(names):
            (work / name).write_bytes(b"".join(frame[k] for frame in data))
        outs = [f"out{k}.bin" for k in range(len(meta["outputs"]))]
        if read_pool and not meta["memory"]["pools"]["host"]["external"]:
            raise InvalidArgumentError("read_pool needs an export with external pools (its runner owns the pool)")
        extra = ["pool.bin"] if read_pool else []
        result = run(image, [*names, *outs, "devices.bin", *extra], cwd=work, timeout=timeout, check=False)
        if 0 < result.status < EXIT_USAGE and result.fault is None:  # the model's own failing status
            detail = result.stderr.strip().splitlines()
            raise KernelError(f"the exported model failed on {cpu}: "
                              f"{detail[-1] if detail else f'status {result.status} (no message)'}")
        if result.status != 0 or result.fault is not None:
            from ..firmware.errors import FirmwareRunError

            what = f"the export's runner on {cpu}"
            reason = f"a CPU fault ({result.fault})" if result.fault else \
                f"status {result.status} ({EXIT_CODES.get(result.status, 'unknown')})"
            stderr = result.stderr.strip().splitlines()
            raise FirmwareRunError(f"{what} stopped with {reason}" + (f": {stderr[-1]}" if stderr else ""), result)
        per_output = []
        for spec, name in zip(meta["outputs"], outs):
            raw = (work / name).read_bytes()
            shape = [len(frames), *spec["shape"]]
            if len(raw) != int(np.prod(shape)) * np.dtype(spec["dtype"]).itemsize:
                from ..firmware.errors import FirmwareRunError

                raise FirmwareRunError(f"the export's runner on {cpu} wrote {len(raw)} bytes of output "
                                       f"{spec['name']!r} for {len(frames)} frame(s)", result)
            per_output.append(np.frombuffer(raw, dtype=spec["dtype"]).reshape(shape))
        outputs = [[out[i].copy() for out in per_output] for i in range(len(frames))]
        states = _device_states(meta, (work / "devices.bin").read_bytes(), cpu)
        pool = (work / "pool.bin").read_bytes() if read_pool else None
    constants, params, pools = _symbol_bytes(image, meta["prefix"])
    for memory, planned in meta["memory"]["pools"].items():
        if memory != "host":
            pools[memory] = planned["bytes"]
    calls = profile_from_run(meta["calls"], result, cpu) if profile else None
    return ExportRun(cpu, outputs[-1], states, result, measure(image), constants, params, pools, pool, outputs,
                     calls)


def _device_states(meta: dict[str, Any], blob: bytes, cpu: str) -> dict[str, dict[str, Any]]:
    from .. import get_registry
    from ..layout import HOST, ILP32

    model = HOST if get_cpu(cpu).is_host else ILP32
    types = {t.name: t for t in get_registry().device_types()}
    layouts: dict[str, Layout] = {}
    for d in meta["devices"]:
        if d["struct"] is None:
            continue
        dtype = types.get(d["name"])
        if dtype is None:
            return {}  # a plugin is not installed here: the structs cannot be decoded
        layouts[d["name"]] = dtype.layout.for_data_model(model)
    half = sum(layout.size for layout in layouts.values())
    states: dict[str, dict[str, Any]] = {}
    offset = 0
    for name, layout in layouts.items():  # the runner writes every struct before the run, then after it
        before = _decode(layout, blob[offset: offset + layout.size])
        after = _decode(layout, blob[half + offset: half + offset + layout.size])
        offset += layout.size
        for f in layout.fields:
            if f.counter and f.name in after:
                after[f.name] = _increase(after[f.name], before[f.name])
        states[name] = after
    return states


def _increase(after: Any, before: Any) -> Any:
    """``after - before``, element by element for an array member."""
    if isinstance(after, list):
        return [_increase(a, b) for a, b in zip(after, before)]
    return after - before


def _decode(layout: Layout, chunk: bytes) -> dict[str, Any]:
    from ..layout import struct_view

    buf = np.frombuffer(bytearray(chunk), dtype=np.uint8)
    view = struct_view(layout, buf)
    out: dict[str, Any] = {}
    for f in layout.fields:
        if f.is_pointer or f.name not in view:
            continue
        value = view[f.name]
        out[f.name] = value.tolist() if f.count else (value[0].item() if hasattr(value, "__len__") else value)
    return out
