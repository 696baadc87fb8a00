"""The firmware platform: build a C99 program for the host or a Cortex-M, run it, measure it.

::

    from tvmdevice import firmware
    image = firmware.build(["app.c"], ["include"], cpu="cortex-m55", out_dir="build")
    result = firmware.run(image, ["in.bin", "out.bin"], cwd="work", timeout=30)
    result.status, result.instructions, result.stack_used
    firmware.measure(image).flash_constants

CPUs: ``host`` (system ``cc``, native), ``cortex-m55`` (QEMU ``mps3-an547``), ``cortex-m4``
(``mps2-an386``, FPU) and ``cortex-m3`` (``mps2-an385``), the last three with ``arm-none-eabi-gcc``,
newlib-nano and semihosting file I/O (``apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi
qemu-system-arm``).  A program includes ``tvmdevice_fw.h`` (:func:`get_include`) to mark the regions
whose instructions are counted apart.
"""

from __future__ import annotations

from .build import Image, build, compiler_flags
from .cpus import BOARDS, CPUS, Cpu, Machine, MemoryRegion, get_cpu
from .errors import (
    FirmwareBuildError,
    FirmwareError,
    FirmwareRunError,
    FirmwareTimeoutError,
    ToolchainMissingError,
)
from .footprint import Footprint, measure
from .linker import DEFAULT_STACK_SIZE
from .platform import get_include
from .run import RunResult, run
from .toolchain import ARM_PACKAGES, find_qemu, find_toolchain, install_hint

__all__ = [
    "ARM_PACKAGES",
    "BOARDS",
    "CPUS",
    "Cpu",
    "DEFAULT_STACK_SIZE",
    "FirmwareBuildError",
    "FirmwareError",
    "FirmwareRunError",
    "FirmwareTimeoutError",
    "Footprint",
    "Image",
    "Machine",
    "MemoryRegion",
    "RunResult",
    "ToolchainMissingError",
    "build",
    "compiler_flags",
    "find_qemu",
    "find_toolchain",
    "get_cpu",
    "get_include",
    "install_hint",
    "measure",
    "run",
]
