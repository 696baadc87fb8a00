"""Helpers of the int16x8 tests: seeded full-range inputs, the devices that declare a kernel key."""

from __future__ import annotations

import numpy as np

import tvmdevice
from tvmdevice import ops
from tvmdevice.aot.frontend import load_tflite


def full_range_inputs(graph, seed: int) -> list[np.ndarray]:
    """Seeded inputs of each graph input's type: the whole integer range, float32 a few hundred wide."""
    rng = np.random.default_rng(seed)
    out = []
    for t in (graph.tensors[i] for i in graph.inputs):
        if np.dtype(t.dtype).kind == "f":
            out.append(rng.normal(0.0, 200.0, size=t.shape).astype(np.float32))
        else:
            info = np.iinfo(t.dtype)
            out.append(rng.integers(info.min, info.max, size=t.shape, endpoint=True, dtype=t.dtype))
    return out


def devices_for(key: str) -> list[str]:
    """Installed devices that declare the kernel key (``"ADD:int16"``)."""
    registry = tvmdevice.get_registry()
    return sorted(name for name in registry.device_names() if key in registry.device_type(name).operators)


def kernel_key_of(model: bytes) -> str:
    """The kernel key of a one-operator model's operator."""
    graph = load_tflite(model)
    op = graph.operators[0]
    return ops.kernel_key(op.type, ops.analyze(graph, op))
