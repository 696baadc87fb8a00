"""Fixtures for the AOT frontend and builder tests (``models_dir`` comes from
the top-level conftest)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tflm_invoke():
    """``tflm_invoke(model, inputs, n_outputs=1)`` -> outputs, run by TensorFlow Lite Micro."""
    runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")

    def invoke(model: bytes, inputs, n_outputs: int = 1):
        interp = runtime.Interpreter.from_bytes(model, arena_size=max(1 << 20, 16 * len(model)))
        for k, x in enumerate(inputs):
            interp.set_input(x, k)
        interp.invoke()
        return [interp.get_output(k) for k in range(n_outputs)]

    return invoke
