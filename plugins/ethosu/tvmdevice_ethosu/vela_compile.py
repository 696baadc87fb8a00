"""Compile a TFLite model with Vela's compiler core (``ethosu.regor``), as the ``vela`` command does.

The architecture and compiler configuration are built by Vela's own code
(``ArchitectureFeatures``, ``vela.get_compiler_config``) from the device's
target options, so that a partition compiles exactly as
``vela MODEL --accelerator-config ... --system-config ... --output-format raw``
would compile it.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

from . import vela_names

__all__ = ["VelaError", "compile_raw", "clock_hz"]


@contextlib.contextmanager
def _captured(into: list[str]) -> Iterator[None]:
    """Capture what is written to the process's stdout and stderr (Vela's C++ core writes there directly)."""
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = [os.dup(1), os.dup(2)]
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            text = io.StringIO()  # Python's own prints, wherever sys.stdout points (a test's capture)
            try:
                with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
                    yield
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
        finally:
            for fd in saved:
                os.close(fd)
        sink.seek(0)
        into.append(text.getvalue() + sink.read().decode("utf-8", "replace"))


def _arch(options: dict[str, Any]) -> Any:
    from ethosu.vela import architecture_features

    # Vela reads its configuration file only for a named system config or memory mode (and refuses one
    # with its internal defaults).
    named = vela_names.DEFAULT not in (options["system_config"], options["memory_mode"])
    files = [str(vela_names.config_path())] if named else []
    return architecture_features.ArchitectureFeatures(
        vela_config_files=files or None, system_config=options["system_config"], memory_mode=options["memory_mode"],
        accelerator_config=options["accelerator_config"], max_blockdep=3, verbose_config=False,
        arena_cache_size=options["arena_cache_size"] or None)


def compile_raw(model: bytes, options: dict[str, Any]) -> Any:
    """Compile ``model`` (TFLite bytes) with the device's options: regor's compiled raw model and its log."""
    from ethosu import regor
    from ethosu.vela import vela

    log: list[str] = []
    with _captured(log):  # Vela's notes on the defaults it chose
        arch = _arch(options)
    system_config = (f"[architecture]\nmacs={arch.num_macs_per_cycle}\ncores={arch.ncores}\n"
                     f"[vela]\nsystem_config_name={arch.system_config}\nmemory_mode_name={arch.memory_mode}\n")
    for name in arch.vela_config_files:
        with open(name, encoding="utf-8") as f:
            system_config += f.read()
    accelerator = "".join(part.capitalize() for part in options["accelerator_config"].split("-")[:-1])
    compiler = vela.get_compiler_config(
        False, False, False, False, options["optimise"], arch.arena_cache_size, False, False, False, False, False,
        False, True, "raw", False, False, False, False, False, "COP1", False, 16, options["tensor_allocator"],
        0.0, "")
    try:
        with _captured(log):
            compiled = regor.compile(accelerator, model, "TFLITE", system_config, options=compiler, verbose=False)
    except RuntimeError as e:
        raise VelaError(str(e), "".join(log)) from None
    return compiled, "".join(log)


class VelaError(RuntimeError):
    """Vela refused to compile: its message, and what it printed (its reasons)."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log


def clock_hz(options: dict[str, Any]) -> float:
    """The NPU clock of the options' system config (Vela's ``core_clock``), in Hz."""
    log: list[str] = []
    with _captured(log):
        return float(_arch(options).core_clock)
