"""Deterministic instruction counts of a run under QEMU, by the project's own TCG plugin.

Debian's QEMU 7.2 is built with plugin support but ships no plugin and no ``qemu-plugin.h``; the
plugin (``csrc/qemu_icount_plugin.c``) declares the handful of API functions it uses itself and is
compiled on first use with the host's ``cc`` into the cache folder, keyed by a hash of its source.

It adds one to a 64-bit counter, inline, before every guest instruction executes, so the count
does not depend on timing, translation-block sizes or chaining: the same image and inputs give the
same number on every run.  Given the addresses of ``tvmd_fw_region_begin``/``tvmd_fw_region_end``
it also sums the instructions executed inside those regions; given those of ``tvmd_fw_mark`` and the
functions it spells an id with, it records the profiling marks (``TVMD_FW_MARK(id)``) of the first
region in order: each mark's id and the region's instructions outside marks when it began.  The
instructions inside the marks are summed apart, so that a mark's own cost goes to no interval.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .errors import FirmwareBuildError, FirmwareError
from .platform import PLATFORM_DIR, cache_dir
from .toolchain import host_cc

__all__ = ["InstructionCounts", "MarkSite", "plugin_path", "plugin_args", "read_counts"]

_SOURCE = PLATFORM_DIR / "qemu_icount_plugin.c"


@dataclass(frozen=True)
class InstructionCounts:
    """What the plugin counted in one run."""

    #: every guest instruction from reset to exit
    total: int
    #: instructions inside the measured regions (tvmd_fw_region_begin .. _end), summed
    region: int
    #: how many measured regions completed
    regions: int
    #: the first region's profiling marks, in the order they ran: (id, the region's instructions outside
    #: marks when it began)
    marks: tuple[tuple[int, int], ...] = ()
    #: instructions inside the first region's marks (in ``region``, in no interval between marks)
    mark_instructions: int = 0


def plugin_path() -> Path:
    """The compiled plugin (built into the cache folder on first use)."""
    cc = host_cc()
    digest = hashlib.sha256(_SOURCE.read_bytes() + cc.version.encode()).hexdigest()[:16]
    target = cache_dir() / "qemu-plugins" / f"tvmd_icount-{digest}.so"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    proc = subprocess.run(
        [cc.cc, "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-fvisibility=hidden",
         str(_SOURCE), "-o", str(tmp)],
        capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:200])
        raise FirmwareBuildError(f"building the QEMU instruction-count plugin failed: {first}", proc.stderr)
    os.replace(tmp, target)
    return target


def _escape(value: str) -> str:
    return value.replace(",", ",,")


@dataclass(frozen=True)
class MarkSite:
    """Where the profiling mark functions are (``tvmd_fw_mark``, ``_zero``, ``_one``, ``_stop``)."""

    mark: int
    zero: int
    one: int
    stop: int


def plugin_args(out_file: Path, begin: int | None = None, end: int | None = None,
                marks: MarkSite | None = None) -> str:
    """The value of QEMU's ``-plugin`` option (commas in the path doubled, as QEMU's option syntax wants)."""
    arg = f"{_escape(str(plugin_path()))},out={_escape(str(out_file))}"
    if begin is not None and end is not None:
        arg += f",begin=0x{begin:x},end=0x{end:x}"
        if marks is not None:
            arg += f",mark=0x{marks.mark:x},zero=0x{marks.zero:x},one=0x{marks.one:x},stop=0x{marks.stop:x}"
    return arg


def read_counts(out_file: Path) -> InstructionCounts | None:
    """Parse the plugin's output file, or None if the plugin wrote none (QEMU did not exit cleanly)."""
    try:
        text = out_file.read_text()
    except FileNotFoundError:
        return None
    fields = dict(item.split("=", 1) for item in text.split())
    if fields.get("marks_lost", "0") != "0":
        raise FirmwareError("the QEMU instruction-count plugin ran out of memory for the profiling marks")
    marks = tuple((int(i), int(c)) for i, c in (m.split(":") for m in fields.get("marks", "").split(",") if m))
    return InstructionCounts(int(fields["instructions"]), int(fields["region_instructions"]),
                             int(fields["regions"]), marks, int(fields.get("mark_instructions", "0")))
