"""Inputs of the export tests."""

from __future__ import annotations

import numpy as np


def random_inputs(graph, seed: int = 0) -> list[np.ndarray]:
    """Seeded int8/int16/float inputs of exactly each graph input's dtype and shape."""
    rng = np.random.default_rng(seed)
    out = []
    for t in (graph.tensors[i] for i in graph.inputs):
        if np.dtype(t.dtype).kind == "f":
            out.append(rng.standard_normal(t.shape).astype(t.dtype))
        else:
            info = np.iinfo(t.dtype)
            out.append(rng.integers(info.min, info.max + 1, size=t.shape, dtype=t.dtype))
    return out
