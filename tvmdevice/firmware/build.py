"""Building a C program into an image for one CPU, cached by a hash of its inputs and flags.

``build(sources, include_dirs, cpu, out_dir)`` compiles the project's sources and the platform's
(:mod:`.platform`) and links them: the system ``cc`` for the host, ``arm-none-eabi-gcc`` with
newlib-nano, the platform's start-up code and a linker script for the machine (:mod:`.linker`) for
Cortex-M.  Everything is compiled ``-std=c99 -Wall -Wextra -Werror``.

The image is rebuilt only when something that could change it changed: the compiler, every flag,
the linker script, the sources, the headers in the include folders and beside the sources, and the
platform's own files.  Each source is compiled on its own into an object file kept in the cache
folder (:func:`.platform.cache_dir`), keyed by the compiler, the flags, the source's path and bytes
and the bytes of every header it could include (by name within each include folder, in order, so
the same sources with generated headers in another folder reuse the objects): a program that
differs from an earlier one in one file recompiles that file only.  Sources compile in parallel.
A failed build leaves no image behind, and a previous image is replaced only by a complete new one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidArgumentError
from .cpus import Cpu, get_cpu
from .errors import FirmwareBuildError
from .linker import DEFAULT_STACK_SIZE, linker_script
from .platform import C_STANDARD_FLAGS, PLATFORM_DIR, cache_dir, platform_sources
from .toolchain import Toolchain, find_toolchain

__all__ = ["Image", "build", "compiler_flags"]

_HEADER_SUFFIXES = {".h", ".hpp", ".inc", ".def"}

#: Flags of every Cortex-M link: no crt0 (the platform has its start-up), newlib-nano, unused sections dropped.
_CORTEXM_LINK_FLAGS = ("-nostartfiles", "--specs=nano.specs", "-Wl,--gc-sections")


@dataclass(frozen=True)
class Image:
    """A linked program for one CPU: an ELF for Cortex-M, a native executable for the host."""

    path: Path
    cpu: Cpu
    name: str
    #: the hash of every input and flag of the build
    key: str
    #: bytes reserved for the stack (Cortex-M; None on the host)
    stack_size: int | None
    #: True when build() found this image already built from the same inputs
    cached: bool


def _define_flags(defines: "Mapping[str, object] | Iterable[str] | None") -> list[str]:
    if defines is None:
        return []
    if isinstance(defines, Mapping):
        return [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in defines.items()]
    return [f"-D{d}" for d in defines]


def compiler_flags(cpu: Cpu, opt_level: str = "-O2") -> list[str]:
    """The compile flags of every source built for ``cpu`` (without include folders and defines)."""
    flags = [*cpu.cflags, opt_level, "-g", *C_STANDARD_FLAGS]
    if not cpu.is_host:
        flags += ["-ffunction-sections", "-fdata-sections"]
    return flags


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _headers(folders: Iterable[Path]) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    for folder in sorted(set(folders)):
        if folder.is_dir():
            for p in sorted(folder.rglob("*")):
                if p.suffix in _HEADER_SUFFIXES and p.is_file():
                    seen.append((str(p), _digest(p)))
    return seen


def _build_key(toolchain: Toolchain, command: list[str], script: str | None, sources: list[Path],
               include_dirs: list[Path]) -> str:
    inputs = {
        "compiler": [toolchain.cc, toolchain.version],
        "command": command,
        "linker_script": script,
        "sources": [(str(s), _digest(s)) for s in sources],
        "headers": _headers([*include_dirs, *(s.parent for s in sources)]),
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def _folder_contents(folder: Path) -> list[tuple[str, str]]:
    """The headers under ``folder`` by name relative to it, with their digests."""
    if not folder.is_dir():
        return []
    return [(str(p.relative_to(folder)), _digest(p)) for p in sorted(folder.rglob("*"))
            if p.suffix in _HEADER_SUFFIXES and p.is_file()]


def _object_key(toolchain: Toolchain, flags: list[str], includes: list[Path], source: Path) -> str:
    """What one object file depends on.

    ``#include "x.h"`` looks beside the source first, then in each ``-I`` folder in order; ``<x.h>``
    in the folders and the compiler's own: so the key holds the source's folder's headers and each
    include folder's headers by relative name, in search order, wherever the folders are (a test's
    or an export's generated headers in a fresh folder reuse the objects of the same sources).
    """
    inputs = {
        "compiler": [toolchain.cc, toolchain.version],
        "flags": flags,
        # the path too: the object's debug information and __FILE__ name the source it was built from
        "source": [str(source), _digest(source)],
        "beside": _folder_contents(source.parent),
        "includes": [_folder_contents(d) for d in includes],
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def _compile(toolchain: Toolchain, flags: list[str], includes: list[Path], source: Path,
             objects: Path) -> tuple[Path | None, str]:
    """``source`` compiled into the object cache (or found there): the object, or None and the log."""
    obj = objects / f"{source.stem}-{_object_key(toolchain, flags, includes, source)[:32]}.o"
    if obj.is_file():
        return obj, ""
    tmp = obj.with_name(f".{obj.name}.{os.getpid()}.{id(source)}.tmp")
    command = [toolchain.cc, *flags, *(f"-I{d}" for d in includes), "-c", str(source), "-o", str(tmp)]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        return None, proc.stderr + proc.stdout
    os.replace(tmp, obj)
    return obj, ""


def _first_error(log: str) -> str:
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    for marker in (": fatal error:", ": error:", "undefined reference", "error:"):
        for ln in lines:
            if marker in ln:
                return ln
    return lines[0] if lines else "no diagnostic"


_OVERFLOW = re.compile(r"region `(\w+)' overflowed by (\d+) bytes")


def _overflow(log: str, cpu: Cpu) -> str | None:
    """What ld's "region `X' overflowed by N bytes" lines say, with the machine's names and sizes."""
    found = _OVERFLOW.findall(log)
    if not found or cpu.machine is None:
        return None
    regions = cpu.machine.regions()
    parts = []
    for region, over in dict(found).items():
        memory = regions.get(region)
        where = f" ({memory.name}, {memory.length:,} B)" if memory is not None else ""
        parts.append(f"region {region}{where} overflowed by {int(over):,} bytes")
    return f"the image does not fit {cpu.machine.name}: " + "; ".join(parts)


def _failure(name: str, cpu: Cpu, first: str, log: str, log_path: Path) -> FirmwareBuildError:
    """The build's error, its whole log left in ``log_path`` (and named in the message)."""
    try:
        log_path.write_text(log)
        where = f" (whole log: {log_path})"
    except OSError:
        where = ""
    return FirmwareBuildError(f"build of {name!r} for {cpu.name} failed: {first}{where}", log)


def build(sources: "Iterable[str | Path]", include_dirs: "Iterable[str | Path]" = (), cpu: "str | Cpu" = "host",
          out_dir: "str | Path" = "build", defines: "Mapping[str, object] | Iterable[str] | None" = None, *,
          name: str = "firmware", opt_level: str = "-O2", stack_size: int = DEFAULT_STACK_SIZE,
          extra_cflags: Iterable[str] = (), libraries: Iterable[str] = ("m",), constants: str = "flash") -> Image:
    """Compile and link ``sources`` for ``cpu`` into ``out_dir`` (reusing an identical earlier build).

    ``defines`` is a mapping (``{"N": 4, "FLAG": None}``) or ``NAME[=VALUE]`` strings; ``stack_size`` is
    the stack reserved at the top of RAM on Cortex-M (ignored on the host); ``libraries`` are linked
    with ``-l``; ``constants`` is where an exported model's constants go (:func:`.linker.linker_script`).
    Raises :class:`ToolchainMissingError` when the CPU's compiler is not installed and
    :class:`FirmwareBuildError` (with the compiler's first error, or the regions a link overflowed and by
    how much) when the build fails; its whole log is then left in ``out_dir/<name>-<cpu>.log``.
    """
    the_cpu = get_cpu(cpu)
    srcs = [Path(s).resolve() for s in sources]
    if not srcs:
        raise InvalidArgumentError("build() needs at least one source file")
    for s in srcs:
        if not s.is_file():
            raise InvalidArgumentError(f"source file {s} does not exist")
    includes = [Path(d).resolve() for d in include_dirs]
    if not name or "/" in name or name.startswith("."):
        raise InvalidArgumentError(f"bad image name {name!r}: expected a plain file name")
    toolchain = find_toolchain(the_cpu)

    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{name}-{the_cpu.name}"
    image_path = out / (stem if the_cpu.is_host else f"{stem}.elf")
    key_path = out / f"{stem}.key"

    all_sources = [*srcs, *platform_sources(the_cpu)]
    flags = compiler_flags(the_cpu, opt_level) + list(extra_cflags) + _define_flags(defines)
    search = [*includes, PLATFORM_DIR]
    script: str | None = None
    link = [f"-l{lib}" for lib in libraries]
    if not the_cpu.is_host:
        script = linker_script(the_cpu, stack_size, constants)
        script_path = out / f"{stem}.ld"
        link = [*_CORTEXM_LINK_FLAGS, f"-T{script_path}", f"-Wl,-Map={out / stem}.map", *link]
    key = _build_key(toolchain, [toolchain.cc, *flags, *(f"-I{d}" for d in search), *link], script, all_sources,
                     includes)
    stack = None if the_cpu.is_host else stack_size

    if image_path.is_file() and key_path.is_file() and key_path.read_text().strip() == key:
        return Image(image_path, the_cpu, name, key, stack, cached=True)

    key_path.unlink(missing_ok=True)
    objects = cache_dir() / "objects" / the_cpu.name
    objects.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=max(1, min(len(all_sources), os.cpu_count() or 1))) as pool:
        compiled = list(pool.map(lambda src: _compile(toolchain, flags, search, src, objects), all_sources))
    log_path = out / f"{stem}.log"
    log_path.unlink(missing_ok=True)
    failed = [log for obj, log in compiled if obj is None]
    if failed:
        image_path.unlink(missing_ok=True)  # an image of other inputs must not pass for this build's
        raise _failure(name, the_cpu, _first_error(failed[0]), "\n".join(failed), log_path)
    if script is not None:
        script_path.write_text(script)
    tmp = image_path.with_name(f".{image_path.name}.{os.getpid()}.tmp")
    command = [toolchain.cc, *the_cpu.cflags, *(str(obj) for obj, _ in compiled), *link, "-o", str(tmp)]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        image_path.unlink(missing_ok=True)
        log = proc.stderr + proc.stdout
        raise _failure(name, the_cpu, _overflow(log, the_cpu) or _first_error(log), log, log_path)
    os.replace(tmp, image_path)
    key_path.write_text(key + "\n")
    return Image(image_path, the_cpu, name, key, stack, cached=False)
