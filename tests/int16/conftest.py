"""Fixtures of the int16x8 tests: models built the way the TFLite converter lays out int16x8 layers,
checked against TensorFlow Lite Micro on seeded inputs over each input type's whole range."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest
from int16_helpers import full_range_inputs

import tvmdevice


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


