"""Reference interpreters run in this process on the same inputs: tflite-micro, and LiteRT when installed.

``tflite-micro`` (PyPI) runs TFLM's reference kernels, the results tvmdevice
is bit-exact with; LiteRT (``ai-edge-litert``) runs the desktop TFLite
runtime (XNNPACK), for speed.  Both are optional: ``pip install
'tvmdevice[bench]'``.

A reference that rejects a model (LiteRT refuses some files TFLM runs, e.g. a
1-D bias with ``quantized_dimension`` 3) raises :class:`ReferenceUnavailableError`
with its reason on one line.  LiteRT's native INFO lines ("Created TensorFlow
Lite XNNPACK delegate") are dropped where they are written, the process's
stderr, while the interpreter loads (no environment variable silences its
minimal logger); its other lines still reach stderr.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..errors import NotSupportedError

__all__ = ["Reference", "REFERENCES", "LABELS", "ReferenceUnavailableError", "available", "open_reference",
           "native_info_dropped"]

#: How a reference is named to a user.
LABELS = {"tflite-micro": "tflite-micro", "litert": "LiteRT"}


class ReferenceUnavailableError(NotSupportedError):
    """The reference is installed but cannot load or run this model; the message is its reason, one line."""


@dataclass
class Reference:
    """One loaded reference interpreter: ``run`` sets inputs, invokes, returns outputs; ``invoke`` only invokes."""

    name: str
    run: Callable[[Sequence[np.ndarray]], list[np.ndarray]]
    invoke: Callable[[], Any]

    def time_runs(self, runs: int, warmup: int, tick: Callable[[], Any] | None = None) -> list[int]:
        """Per-invoke nanoseconds of ``runs`` runs after ``warmup`` (inputs already set); ``tick`` is called
        after each run, warm-up included."""
        for _ in range(warmup):
            self.invoke()
            if tick:
                tick()
        out = []
        for _ in range(runs):
            start = time.perf_counter_ns()
            self.invoke()
            out.append(time.perf_counter_ns() - start)
            if tick:
                tick()
        return out


def _tflm(model: bytes, n_outputs: int) -> Reference:
    from tflite_micro.python.tflite_micro import runtime

    from ..testing.oracle import _arena_size

    it = runtime.Interpreter.from_bytes(bytes(model), arena_size=_arena_size(bytes(model)))

    def run(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        for k, x in enumerate(inputs):
            it.set_input(x, k)
        it.invoke()
        return [np.array(it.get_output(k)) for k in range(n_outputs)]

    return Reference("tflite-micro", run, it.invoke)


@contextlib.contextmanager
def native_info_dropped() -> Iterator[None]:
    """File descriptor 2 goes to a temporary file for the block; afterwards its lines are written back to
    stderr except the native runtime's ``INFO:`` lines."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            kept = [line for line in captured.read().decode(errors="replace").splitlines(keepends=True)
                    if not line.startswith("INFO: ")]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()


def _litert(model: bytes, n_outputs: int) -> Reference:
    from ai_edge_litert.interpreter import Interpreter

    with native_info_dropped():
        it = Interpreter(model_content=bytes(model), num_threads=1)
        it.allocate_tensors()
    ins, outs = it.get_input_details(), it.get_output_details()

    def run(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        for d, x in zip(ins, inputs):
            it.set_tensor(d["index"], x)
        it.invoke()
        return [np.array(it.get_tensor(d["index"])) for d in outs[:n_outputs]]

    return Reference("litert", run, it.invoke)


#: reference name -> (module that must be importable, distribution to install, loader)
REFERENCES: dict[str, tuple[str, str, Callable[[bytes, int], Reference]]] = {
    "tflite-micro": ("tflite_micro", "tflite-micro", _tflm),
    "litert": ("ai_edge_litert", "ai-edge-litert", _litert),
}


def available(name: str) -> bool:
    return importlib.util.find_spec(REFERENCES[name][0]) is not None


def open_reference(name: str, model: bytes, n_outputs: int) -> Reference:
    """Load ``model`` into reference ``name``.

    :raises NotSupportedError: the reference is not installed (the message says what to install).
    """
    if name not in REFERENCES:
        raise NotSupportedError(f"unknown reference {name!r}; choose one of {', '.join(REFERENCES)}")
    module, dist, load = REFERENCES[name]
    if not available(name):
        raise NotSupportedError(f"the reference {name} needs the {dist} package, which is not installed: "
                                f"pip install {dist} (or pip install 'tvmdevice[bench]')")
    try:
        ref = load(model, n_outputs)
    except Exception as exc:  # noqa: BLE001 - the runtimes raise ValueError/RuntimeError with their reason
        raise ReferenceUnavailableError(_reason(name, "loads", exc)) from None
    run = ref.run

    def checked_run(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        try:
            return run(inputs)
        except Exception as exc:  # noqa: BLE001 - as above
            raise ReferenceUnavailableError(_reason(name, "runs", exc)) from None

    ref.run = checked_run
    return ref


def _reason(name: str, doing: str, exc: BaseException) -> str:
    """One line: which reference failed, doing what, and its own words (whitespace folded, bounded)."""
    words = " ".join(str(exc).split()) or type(exc).__name__
    if len(words) > 240:
        words = words[:237] + "..."
    return f"{LABELS[name]} rejects the model when it {doing} it: {words}"
