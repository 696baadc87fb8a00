"""Fixtures of the export tests: a private build cache, and the references an export is compared with."""

from __future__ import annotations

import os

import numpy as np
import pytest


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory):
    """The QEMU instruction-count plugin is built into a folder of this test session."""
    old = os.environ.get("TVMDEVICE_CACHE_DIR")
    os.environ["TVMDEVICE_CACHE_DIR"] = str(tmp_path_factory.mktemp("export-cache"))
    yield
    if old is None:
        os.environ.pop("TVMDEVICE_CACHE_DIR", None)
    else:
        os.environ["TVMDEVICE_CACHE_DIR"] = old


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
