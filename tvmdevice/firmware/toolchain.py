"""Finding the tools a CPU needs: its C compiler (with newlib for Cortex-M) and qemu-system-arm.

Each lookup either returns the tool or raises :class:`ToolchainMissingError` naming the Debian
packages that provide it.  ``CC`` chooses the host compiler (default ``cc``); the Cortex-M tools are
found on ``PATH``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass

from .cpus import Cpu
from .errors import ToolchainMissingError

__all__ = ["ARM_PACKAGES", "Toolchain", "find_toolchain", "find_qemu", "host_cc", "install_hint"]

#: The Debian packages that build and run Cortex-M images.
ARM_PACKAGES = ("gcc-arm-none-eabi", "libnewlib-arm-none-eabi", "qemu-system-arm")

ARM_GCC = "arm-none-eabi-gcc"
QEMU_ARM = "qemu-system-arm"


def install_hint(packages: tuple[str, ...] = ARM_PACKAGES) -> str:
    """The command that installs ``packages``."""
    return f"apt-get install {' '.join(packages)}"


@dataclass(frozen=True)
class Toolchain:
    """A C compiler driver for one CPU and the identity that keys the build cache."""

    cc: str
    version: str


@functools.cache
def _version(cc: str) -> str:
    out = subprocess.run([cc, "--version"], capture_output=True, text=True, check=False).stdout
    return out.splitlines()[0] if out else cc


@functools.cache
def _has_newlib(cc: str) -> bool:
    # The driver prints the bare name back when it does not find the library.
    found = subprocess.run([cc, "-print-file-name=libc_nano.a"], capture_output=True, text=True,
                           check=False).stdout.strip()
    return os.path.isabs(found) and os.path.exists(found)


def host_cc() -> Toolchain:
    """The host's C compiler (``$CC``, default ``cc``)."""
    cc = os.environ.get("CC") or "cc"
    path = shutil.which(cc)
    if path is None:
        raise ToolchainMissingError(f"no host C compiler: {cc!r} is not on PATH ({install_hint(('gcc',))})",
                                    ("gcc",))
    return Toolchain(path, _version(path))


def find_toolchain(cpu: Cpu) -> Toolchain:
    """The compiler that builds for ``cpu``; raises :class:`ToolchainMissingError` if it or newlib is missing."""
    if cpu.is_host:
        return host_cc()
    path = shutil.which(ARM_GCC)
    if path is None:
        raise ToolchainMissingError(
            f"{cpu.name} needs {ARM_GCC}, which is not installed: {install_hint()}", ARM_PACKAGES)
    if not _has_newlib(path):
        raise ToolchainMissingError(
            f"{cpu.name} needs newlib for {ARM_GCC}, which is not installed: {install_hint()}", ARM_PACKAGES)
    return Toolchain(path, _version(path))


def find_qemu(cpu: Cpu) -> str:
    """The ``qemu-system-arm`` that runs ``cpu``'s machine; raises :class:`ToolchainMissingError` if missing."""
    path = shutil.which(QEMU_ARM)
    if path is None:
        raise ToolchainMissingError(
            f"running on {cpu.name} needs {QEMU_ARM}, which is not installed: {install_hint()}", ARM_PACKAGES)
    return path
