"""A PAD folded into the convolution it feeds (``tvmdevice.aot.fold``) exports as the same folded plan:
the generated run calls one convolution kernel and no PAD, the padded tensor has no device block, and
the firmware's outputs equal tflite-micro's and the Python executor's on the host and on Cortex-M55."""

from __future__ import annotations

import numpy as np
import pytest
from export_inputs import random_inputs

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.export import run_export
from tvmdevice.testing.firmware import require_tools
from tvmdevice.testing.oracle import tflm_run

pytestmark = pytest.mark.export


def _model() -> bytes:
    """PAD -> CONV_2D (VALID), PADV2 with the zero point -> DEPTHWISE_CONV_2D, and a PADV2 with another value."""
    b = ModelBuilder(name="pad_fold", seed=31)
    x = b.input((1, 9, 8, 3), scale=0.04, zero_point=-5)
    c = b.conv2d(b.pad(x, [[0, 0], [2, 0], [1, 2], [0, 0]]), filters=8, kernel=3, padding="VALID", out_zero_point=3)
    d = b.depthwise_conv2d(b.padv2(c, [[0, 0], [1, 1], [0, 1], [0, 0]], 3), kernel=3, padding="SAME")
    b.output(b.depthwise_conv2d(b.padv2(d, [[0, 0], [1, 1], [1, 1], [0, 0]], 100), kernel=3, padding="VALID"))
    return b.build()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    if "woofles" not in tvmdevice.get_registry().device_names():
        pytest.skip("device 'woofles' not installed (pip install ./plugins/woofles)")
    model = _model()
    module = tvmdevice.compile(model, "woofles, c", name="pad_fold")
    return model, module, module.export(tmp_path_factory.mktemp("fold") / "pad_fold")


def test_the_export_runs_the_folded_plan(exported):
    _, module, out = exported
    assert [(f.pad, f.conv) for f in module.placement.folds] == [(0, 1), (2, 3)]
    assert module.placement.ops[4].device == "woofles"  # PADV2 with 100 != zero point: its own kernel
    source = "\n".join(p.read_text() for p in out.rglob("*.c") if "tvmgen" in p.name)
    assert source.count("status = tvmd_woofles_pad_s8(") == 1
    assert "operator #0 PAD" not in source and "operator #2 PADV2" not in source
    for f in module.placement.folds:
        assert not any(k[1] == f.padded for k in module.plan.pools["woofles"].block_of)


@pytest.mark.parametrize("cpu", ["host", "cortex-m55"])
def test_the_folded_export_equals_tflm_and_the_executor(exported, cpu):
    require_tools(cpu)
    model, module, out = exported
    inputs = random_inputs(module.graph, seed=5)
    want = tflm_run(model, inputs).output(0)
    with module.executor() as ex:
        ours = ex.run(inputs)[0]
    np.testing.assert_array_equal(ours.reshape(want.shape), want)
    got = run_export(out, cpu, inputs)
    np.testing.assert_array_equal(got.outputs[0], want)
    kernels = sum(1 for s in module.schedule.steps if hasattr(s, "op_index"))
    assert kernels == 4 and got.devices["woofles"]["kernel_calls"] == kernels  # the measured run alone
