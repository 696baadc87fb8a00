"""Reference interpreters run in this process on the same inputs: tflite-micro, and LiteRT when installed.

``tflite-micro`` (PyPI) runs TFLM's reference kernels, the results tvmdevice
is bit-exact with; LiteRT (``ai-edge-litert``) runs the desktop TFLite
runtime (XNNPACK), for speed.  Both are optional: ``pip install
'tvmdevice[bench]'``.
"""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import NotSupportedError

__all__ = ["Reference", "REFERENCES", "available", "open_reference"]


@dataclass
class Reference:
    """One loaded reference interpreter: ``run`` sets inputs, invokes, returns outputs; ``invoke`` only invokes."""

    name: str
    run: Callable[[Sequence[np.ndarray]], list[np.ndarray]]
    invoke: Callable[[], Any]

    def time_runs(self, runs: int, warmup: int) -> list[int]:
        """Per-invoke nanoseconds of ``runs`` runs after ``warmup`` (inputs already set)."""
        for _ in range(warmup):
            self.invoke()
        out = []
        for _ in range(runs):
            start = time.perf_counter_ns()
            self.invoke()
            out.append(time.perf_counter_ns() - start)
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


def _litert(model: bytes, n_outputs: int) -> Reference:
    from ai_edge_litert.interpreter import Interpreter

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
    return load(model, n_outputs)
