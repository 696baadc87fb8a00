"""Running an image: natively for the host, under ``qemu-system-arm`` for Cortex-M, within a time limit.

Under QEMU the program's stdio and files are the host's through semihosting (``target=native``):
relative paths are relative to ``cwd``, and its arguments reach ``main`` through the semihosting
command line.  The start-up code reports the stack's high-water mark at exit, and a CPU fault, on
the semihosting console; :func:`run` takes those lines out of ``stderr`` into :class:`RunResult`.
Instructions are counted by the project's QEMU plugin (:mod:`.icount`).

A run past its time limit is killed with its whole process group and raises
:class:`FirmwareTimeoutError`; a non-zero status or a fault raises :class:`FirmwareRunError`
unless ``check=False``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidArgumentError
from .build import Image
from .elf import read_elf
from .errors import FirmwareRunError, FirmwareTimeoutError
from .icount import MarkSite, plugin_args, read_counts
from .toolchain import find_qemu

__all__ = ["RunResult", "run", "qemu_command"]

#: Longest semihosting command line the start-up code accepts (cortexm_syscalls.c).
_CMDLINE_BYTES = 1023

_STACK_REPORT = re.compile(rb"\ntvmdevice-fw: stack_used=(\d+) stack_size=(\d+)\n")
_FAULT_REPORT = re.compile(rb"\ntvmdevice-fw: fault exception=(\d+) pc=0x([0-9a-f]+)\n")

_EXCEPTIONS = {2: "NMI", 3: "HardFault", 4: "MemManage", 5: "BusFault", 6: "UsageFault", 7: "SecureFault",
               11: "SVCall", 12: "DebugMonitor", 14: "PendSV", 15: "SysTick"}


@dataclass(frozen=True)
class RunResult:
    """What one run of an image did."""

    #: the program's exit status (main's return value, or exit()'s argument)
    status: int
    stdout: str
    #: the program's stderr (under QEMU also QEMU's own messages), platform reports removed
    stderr: str
    #: guest instructions from reset to exit (None on the host, or when not counted)
    instructions: int | None
    #: instructions inside tvmd_fw_region_begin .. tvmd_fw_region_end, summed (None when not counted)
    region_instructions: int | None
    #: measured regions completed
    regions: int
    #: the first region's profiling marks in the order they ran: (id, the region's instructions outside
    #: marks when it began); empty unless the image was built with ``TVMD_FW_PROFILE`` and counted
    marks: tuple[tuple[int, int], ...]
    #: instructions inside those marks (part of ``region_instructions``, in no interval between marks)
    mark_instructions: int
    #: the stack's high-water mark in bytes (None on the host)
    stack_used: int | None
    #: a CPU fault, e.g. "HardFault at pc=0x1a2" (None when the program exited normally)
    fault: str | None
    #: wall-clock seconds the run took
    seconds: float
    #: the command line that ran it
    command: tuple[str, ...]


def _escape(value: str) -> str:
    return value.replace(",", ",,")


def qemu_command(image: Image, args: Iterable[str] = (), plugin: str | None = None) -> list[str]:
    """The ``qemu-system-arm`` command line that runs ``image`` with ``args``."""
    machine = image.cpu.machine
    if machine is None:
        raise InvalidArgumentError("the host CPU runs natively, not under QEMU")
    argv = [image.name, *args]
    for a in argv:
        if not a or any(c.isspace() for c in a):
            raise InvalidArgumentError(
                f"argument {a!r}: under QEMU arguments reach main space-separated, so none may be empty "
                "or contain white space")
    if len(" ".join(argv)) > _CMDLINE_BYTES:
        raise InvalidArgumentError(f"command line longer than {_CMDLINE_BYTES} bytes")
    semihosting = "enable=on,target=native," + ",".join(f"arg={_escape(a)}" for a in argv)
    cmd = [find_qemu(image.cpu), "-M", machine.name, "-nographic", "-serial", "null", "-monitor", "none",
           "-semihosting-config", semihosting, "-kernel", str(image.path)]
    if plugin is not None:
        cmd += ["-plugin", plugin]
    return cmd


def _region_addresses(image: Image) -> tuple[int, int] | None:
    elf = read_elf(image.path)
    begin, end = elf.symbol("tvmd_fw_region_begin"), elf.symbol("tvmd_fw_region_end")
    if begin is None or end is None:
        return None
    return begin.value & ~1, end.value & ~1  # Thumb functions have bit 0 set in the symbol table


def _mark_site(image: Image) -> MarkSite | None:
    """Where ``tvmd_fw_mark`` is, when the image has profiling marks (built with ``TVMD_FW_PROFILE``)."""
    elf = read_elf(image.path)
    found = [elf.symbol(f"tvmd_fw_mark{part}") for part in ("", "_zero", "_one", "_stop")]
    if any(s is None for s in found):
        return None
    return MarkSite(*(s.value & ~1 for s in found if s is not None))


def _communicate(proc: subprocess.Popen[bytes], timeout: float, what: str) -> tuple[bytes, bytes]:
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        raise FirmwareTimeoutError(f"{what} ran past its {timeout:g} s time limit and was killed") from None


def run(image: Image, args: Iterable[str] = (), cwd: "str | Path | None" = None, timeout: float = 60.0, *,
        count_instructions: bool = True, check: bool = True) -> RunResult:
    """Run ``image`` with ``args`` in ``cwd`` (default: the current folder), at most ``timeout`` seconds.

    Raises :class:`FirmwareTimeoutError` past the limit, :class:`ToolchainMissingError` when QEMU is not
    installed, and, when ``check`` is true, :class:`FirmwareRunError` for a non-zero status or a fault.
    """
    args = [str(a) for a in args]
    workdir = str(Path(cwd).resolve()) if cwd is not None else None
    if workdir is not None and not Path(workdir).is_dir():
        raise InvalidArgumentError(f"cwd {workdir} is not a folder")
    cpu = image.cpu
    with tempfile.TemporaryDirectory(prefix="tvmd-fw-run-") as tmp:
        counts_file = Path(tmp) / "counts.txt"
        if cpu.is_host:
            cmd = [image.name, *args]  # argv[0] is the image's name, as under QEMU
            what = f"{image.name} on the host"
        else:
            find_qemu(cpu)  # before building the plugin: a missing emulator is the error to report
            plugin = None
            if count_instructions:
                begin, end = _region_addresses(image) or (None, None)
                plugin = plugin_args(counts_file, begin, end, marks=_mark_site(image))
            cmd = qemu_command(image, args, plugin)
            what = f"{image.name} on {cpu.name} (qemu-system-arm -M {cmd[2]})"
        start = time.monotonic()
        executable = str(image.path) if cpu.is_host else None
        proc = subprocess.Popen(cmd, executable=executable, cwd=workdir, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        out, err = _communicate(proc, timeout, what)
        seconds = time.monotonic() - start
        counts = read_counts(counts_file) if not cpu.is_host and count_instructions else None

    stack_used = fault = None
    if not cpu.is_host:
        reports = list(_STACK_REPORT.finditer(err))
        if reports:
            m = reports[-1]
            stack_used = int(m.group(1))
            err = err[:m.start()] + err[m.end():]
        f = _FAULT_REPORT.search(err)
        if f is not None:
            number = int(f.group(1))
            fault = f"{_EXCEPTIONS.get(number, f'exception {number}')} at pc=0x{f.group(2).decode()}"
            err = err[:f.start()] + err[f.end():]
    status = proc.returncode
    result = RunResult(
        status=status, stdout=out.decode("utf-8", "replace"), stderr=err.decode("utf-8", "replace"),
        instructions=counts.total if counts else None, region_instructions=counts.region if counts else None,
        regions=counts.regions if counts else 0, marks=counts.marks if counts else (),
        mark_instructions=counts.mark_instructions if counts else 0, stack_used=stack_used, fault=fault,
        seconds=seconds, command=tuple(cmd))
    if check and (status != 0 or fault is not None):
        raise FirmwareRunError(_failure(what, result), result)
    return result


def _failure(what: str, result: RunResult) -> str:
    if result.fault is not None:
        return f"{what} stopped on a CPU fault: {result.fault}"
    qemu_error = next((ln for ln in result.stderr.splitlines() if ln.startswith("qemu-system-arm:")), None)
    if qemu_error is not None:
        return f"{what} could not run: {qemu_error}"
    if result.status < 0:
        return f"{what} was killed by signal {-result.status}"
    return f"{what} exited with status {result.status}"
