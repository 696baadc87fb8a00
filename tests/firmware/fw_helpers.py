"""Helpers of the firmware platform tests: the test programs, the Cortex-M tools, the dense layer.

Tests that build or run for Cortex-M need arm-none-eabi-gcc, newlib and qemu-system-arm: without
them they skip, saying what to install, except under ``CI=true``, where a missing tool fails them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tvmdevice.testing.firmware import missing_tools, require_tools  # noqa: F401 - used by the tests

PROGRAMS = Path(__file__).parent / "programs"
ARM_CPUS = ("cortex-m55", "cortex-m4", "cortex-m3")
ALL_CPUS = ("host", *ARM_CPUS)


class DenseLayer:
    """The weights of programs/dense.c, their header, and the same layer computed in numpy."""

    IN_ZP, OUT_ZP, MULT, SHIFT = -3, 5, 1_518_500_250, 40

    def __init__(self, rows: int, cols: int, seed: int = 7) -> None:
        rng = np.random.default_rng(seed)
        self.rows, self.cols = rows, cols
        self.weights = rng.integers(-128, 128, size=(rows, cols), dtype=np.int8)
        self.bias = rng.integers(-5000, 5000, size=rows, dtype=np.int32)

    def header(self) -> str:
        rows = ",\n".join("  {" + ", ".join(str(int(v)) for v in row) + "}" for row in self.weights)
        bias = ", ".join(str(int(b)) for b in self.bias)
        return (
            "/* written by tests/firmware/fw_helpers.py */\n#include <stdint.h>\n"
            f"#define DENSE_ROWS {self.rows}\n#define DENSE_COLS {self.cols}\n"
            f"#define DENSE_IN_ZP ({self.IN_ZP})\n#define DENSE_OUT_ZP ({self.OUT_ZP})\n"
            f"#define DENSE_MULT ((int64_t){self.MULT})\n#define DENSE_SHIFT {self.SHIFT}\n"
            f"static const int8_t dense_weights[{self.rows}][{self.cols}] = {{\n{rows}\n}};\n"
            f"static const int32_t dense_bias[{self.rows}] = {{{bias}}};\n")

    def write_header(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "dense_weights.h").write_text(self.header())
        return folder

    def reference(self, x: np.ndarray) -> np.ndarray:
        acc = self.bias.astype(np.int64) + (x.astype(np.int64) - self.IN_ZP) @ self.weights.astype(np.int64).T
        scaled = (acc * self.MULT + (1 << (self.SHIFT - 1))) >> self.SHIFT
        return np.clip(scaled + self.OUT_ZP, -128, 127).astype(np.int8)


def processes_running(path: Path) -> list[int]:
    """Process ids whose command line mentions ``path`` (to check that a killed run left nothing behind)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if str(path) in cmdline:
                found.append(int(proc.name))
    return found
