"""TFLM's arena for a model, measured by tflite-micro in a child process.

The Python TFLM package has no ``arena_used_bytes()``; its recording
allocator prints the total (and the head: the non-persistent section, the
tensors and scratch TFLM plans; the tail holds its persistent structures)
with ``print_allocations()``.  That is read from a child process, so that a
model TFLM aborts on cannot take the caller down with it.  The child runs in the
temporary directory: ``python -c`` puts its working directory first on ``sys.path``,
and run from a source checkout it would import the checkout's uncompiled package.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass

__all__ = ["TFLMArena", "measure_tflm_arena"]

_CHILD = ("import sys\n"
          "from tvmdevice.testing.oracle import tflm_interpreter\n"
          "tflm_interpreter(sys.stdin.buffer.read()).print_allocations()\n")
_TOTAL = re.compile(r"Arena allocation total (\d+) bytes")
_HEAD = re.compile(r"Arena allocation head (\d+) bytes")


@dataclass(frozen=True)
class TFLMArena:
    """TFLM's arena: ``total`` bytes (``head`` of them the tensors and scratch it plans), or why it is unknown."""

    total: int | None = None
    head: int | None = None
    unavailable: str | None = None

    def describe(self) -> str:
        if self.total is None:
            return f"TFLM arena unavailable: {self.unavailable}"
        head = f", head {self.head:,} B" if self.head is not None else ""
        return f"TFLM arena {self.total:,} B{head}"


def measure_tflm_arena(model: bytes | None, timeout: float = 60.0) -> TFLMArena:
    """TFLM's recorded arena for ``model`` (a ``.tflite``'s bytes), or the reason it could not be measured."""
    if model is None:
        return TFLMArena(unavailable="no .tflite file (the built-in demo)")
    if importlib.util.find_spec("tflite_micro") is None:
        return TFLMArena(unavailable="tflite-micro is not installed (pip install 'tvmdevice[bench]')")
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD], input=bytes(model), capture_output=True,
                              timeout=timeout, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return TFLMArena(unavailable=f"tflite-micro took over {timeout:g} s")
    out = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
    total, head = _TOTAL.search(out), _HEAD.search(out)
    if proc.returncode != 0 or total is None:
        last = next((line for line in reversed(out.strip().splitlines()) if line.strip()), "")
        why = f"exit status {proc.returncode}" + (f": {last.strip()[:160]}" if last else "")
        return TFLMArena(unavailable=f"tflite-micro refused the model ({why})")
    return TFLMArena(int(total.group(1)), int(head.group(1)) if head else None)
