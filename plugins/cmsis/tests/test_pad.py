"""PAD and PADV2 on cmsis-nn (arm_pad_s8 and its int16 twin): every padding, fill, rank and data type it
takes, bit-exact with tflite-micro, on both packings; what it does not take (5-D) goes to the next device."""

from __future__ import annotations

import numpy as np
import pytest
import tvmdevice
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.testing.oracle import tflm_run

PADS = {
    "nhwc": ((1, 4, 5, 3), [[0, 0], [1, 2], [0, 1], [2, 0]]),
    "batch-and-channels": ((2, 3, 3, 4), [[1, 1], [0, 0], [2, 0], [0, 3]]),
    "none": ((1, 2, 2, 2), [[0, 0], [0, 0], [0, 0], [0, 0]]),
    "2d": ((5, 6), [[2, 1], [0, 4]]),
    "1d": ((7,), [[3, 2]]),
}


def _model(shape, pads, kind: str, value: int | None, dtype: str = "int8") -> bytes:
    b = ModelBuilder(seed=3)
    x = b.input(shape, 0.05, 0 if dtype == "int16" else -4, dtype=dtype)
    b.output(b.pad(x, pads) if kind == "PAD" else b.padv2(x, pads, value))
    return b.build()


def _run(model: bytes, target: str, dtype: str = "int8") -> tuple[list[str], np.ndarray, np.ndarray]:
    module = tvmdevice.compile(model, target)
    shape = module.graph.tensors[module.graph.inputs[0]].shape
    info = np.iinfo(dtype)
    x = np.random.default_rng(1).integers(info.min, info.max + 1, size=shape).astype(dtype)
    with module.executor() as ex:
        got = ex.run([x])[0]
    return [p.device for p in module.placement.ops], got, tflm_run(model, [x]).output(0)


@pytest.mark.parametrize("mcpu", ["", "cortex-m55"])
@pytest.mark.parametrize("kind, value", [("PAD", None), ("PADV2", 9), ("PADV2", None)])
@pytest.mark.parametrize("case", sorted(PADS))
def test_pad_runs_on_cmsis_nn_bit_exact(case, kind, value, mcpu):
    shape, pads = PADS[case]
    target = f"cmsis-nn -mcpu={mcpu}, c" if mcpu else "cmsis-nn, c"
    devices, got, expected = _run(_model(shape, pads, kind, value), target)
    assert devices == ["cmsis-nn"]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("mcpu", ["", "cortex-m55"])
@pytest.mark.parametrize("kind, value", [("PAD", None), ("PADV2", -1234), ("PADV2", 32767)])
@pytest.mark.parametrize("case", sorted(PADS))
def test_int16_pad_runs_on_cmsis_nn_bit_exact(case, kind, value, mcpu):
    shape, pads = PADS[case]
    target = f"cmsis-nn -mcpu={mcpu}, c" if mcpu else "cmsis-nn, c"
    model = _model(shape, pads, kind, value, "int16")
    devices, got, expected = _run(model, target, "int16")
    assert devices == ["cmsis-nn"]
    assert got.dtype == np.int16
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("shape, pads, dtype, reason", [
    ((1, 2, 1, 3, 2), [[0, 0], [1, 0], [0, 0], [0, 1], [1, 1]], "int8", "up to 4 dimensions"),
    ((1, 2, 1, 3, 2), [[0, 0], [1, 0], [0, 0], [0, 1], [1, 1]], "int16", "up to 4 dimensions"),
])
def test_what_arm_pad_s8_does_not_take_runs_on_the_host(shape, pads, dtype, reason):
    model = _model(shape, pads, "PAD", None, dtype)
    module = tvmdevice.compile(model, "cmsis-nn, c")
    (placed,) = module.placement.ops
    assert placed.device == "c" and reason in dict(placed.declined)["cmsis-nn"]
    devices, got, expected = _run(model, "cmsis-nn, c", dtype)
    np.testing.assert_array_equal(got, expected)
