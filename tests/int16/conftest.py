"""Fixtures of the int16x8 tests: models built the way the TFLite converter lays out int16x8 layers,
checked against TensorFlow Lite Micro on seeded inputs over each input type's whole range."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

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


@pytest.fixture(scope="session")
def check_against_tflm() -> Callable[..., int]:
    """``check(model, device, seeds)``: compile ``model`` for ``device`` (strictly placed there), run it on
    seeded full-range inputs and compare every operator output with TFLM; returns the values compared."""
    from tvmdevice.testing.oracle import tflm_run

    def check(model: bytes, device: str, seeds=(0, 1)) -> int:
        target = device if device == "c" else f"{device}, c"
        module = tvmdevice.compile(model, target, preserve_all_tensors=True, strict=device != "c")
        placed = [p for p in module.placement.ops if not p.is_view]
        assert all(p.device == device for p in placed), [(p.op_type, p.device, p.declined) for p in placed]
        compared = 0
        with module.executor() as ex:
            for seed in seeds:
                inputs = full_range_inputs(module.graph, seed)
                ref = tflm_run(model, inputs)
                ex.run(inputs)
                for op in module.graph.operators:
                    for t in op.outputs:
                        tensor = module.graph.tensors[t]
                        want = ref.tensor(t, tensor.shape)
                        got = ex.tensor(t)
                        assert got.dtype == want.dtype, f"tensor {t}: {got.dtype} vs TFLM {want.dtype}"
                        diff = np.abs(got.astype(np.int64) - want.astype(np.int64)) if got.dtype.kind != "f" else 0
                        assert np.array_equal(got, want), (
                            f"operator {op.index} ({op.type}) on {device}, seed {seed}: tensor {t} differs from "
                            f"TFLM at {int(np.count_nonzero(got != want))} of {got.size} values "
                            f"(max |diff| {int(np.max(diff))})")
                        compared += got.size
        return compared

    return check


def kernel_key_of(model: bytes) -> str:
    """The kernel key of a one-operator model's operator."""
    graph = load_tflite(model)
    op = graph.operators[0]
    return ops.kernel_key(op.type, ops.analyze(graph, op))
