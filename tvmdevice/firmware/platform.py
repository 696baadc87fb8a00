"""Where the platform's own C lives, which of it each CPU links, and where built artefacts are cached.

The platform sources (``csrc/``) are compiled into every image: the region markers of
``tvmdevice_fw.h`` everywhere, and on Cortex-M the start-up code and newlib's system calls over
semihosting.  ``TVMDEVICE_CACHE_DIR`` overrides the cache folder (default
``$XDG_CACHE_HOME/tvmdevice``, else ``~/.cache/tvmdevice``).
"""

from __future__ import annotations

import os
from pathlib import Path

from .cpus import Cpu

__all__ = ["PLATFORM_DIR", "get_include", "platform_sources", "cache_dir", "C_STANDARD_FLAGS"]

#: The platform's C sources, headers and linker script template.
PLATFORM_DIR = Path(__file__).resolve().parent / "csrc"

#: Flags every project and platform source is compiled with, on every CPU.
C_STANDARD_FLAGS = ("-std=c99", "-Wall", "-Wextra", "-Werror")


def get_include() -> str:
    """The folder holding ``tvmdevice_fw.h`` (on every build's include path)."""
    return str(PLATFORM_DIR)


def platform_sources(cpu: Cpu) -> tuple[Path, ...]:
    """The platform C files linked into every image for ``cpu``."""
    common = (PLATFORM_DIR / "tvmdevice_fw.c",)
    if cpu.is_host:
        return common
    return common + (PLATFORM_DIR / "cortexm_startup.c", PLATFORM_DIR / "cortexm_syscalls.c")


def cache_dir() -> Path:
    """The folder for cached artefacts (created on first use)."""
    root = os.environ.get("TVMDEVICE_CACHE_DIR")
    if root:
        path = Path(root)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        path = (Path(xdg) if xdg else Path.home() / ".cache") / "tvmdevice"
    path.mkdir(parents=True, exist_ok=True)
    return path
