"""An int16x8 model placed on cmsis-nn, exported as C, runs bit-exact with tflite-micro on host and Cortex-M.

The model holds every int16 variant cmsis-nn runs (CONV_2D, DEPTHWISE_CONV_2D, ADD, MUL, pooling,
FULLY_CONNECTED, SOFTMAX int16 and int8 -> int16) and TRANSPOSE, between QUANTIZE steps (which stay on
`c`); the Python executor and the exported C must both equal TFLM.
"""

from __future__ import annotations

import numpy as np
import pytest
import tvmdevice
from tvmdevice import firmware
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.export import run_export
from tvmdevice.testing.oracle import tflm_run

from conftest import random_inputs

ON_CMSIS = {"CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "MUL", "AVERAGE_POOL_2D", "MAX_POOL_2D", "FULLY_CONNECTED",
            "SOFTMAX", "TRANSPOSE"}


def int16x8_model() -> bytes:
    b = ModelBuilder(name="cmsis16", seed=11)
    x = b.input((1, 8, 8, 3), scale=0.02, zero_point=-3)
    q = b.quantize(x, 0.0004, 0, dtype="int16")
    c = b.conv2d(q, filters=6, kernel=3, activation="RELU")
    d = b.depthwise_conv2d(c, kernel=3, stride=1)
    a = b.add(c, d)
    p = b.avg_pool2d(a, 2)
    m = b.max_pool2d(p, 2, stride=1, padding="SAME")
    mm = b.mul(m, m, out_scale=float(m.scale) ** 2 * 32768.0)
    t = b.transpose(mm, (0, 3, 1, 2))
    fc = b.fully_connected(t, 10, per_channel=True)
    b.output(b.quantize(b.softmax(fc), 1.0 / 256, -128, dtype="int8"))
    b.output(b.softmax(b.transpose(x, (0, 2, 1, 3)), out_dtype="int16"))
    return b.build()


@pytest.fixture(scope="module")
def compiled():
    model = int16x8_model()
    module = tvmdevice.compile(model, "cmsis-nn -mcpu=cortex-m55, c", name="cmsis16")
    return model, module


def test_the_variants_are_placed_on_cmsis_nn(compiled):
    _, module = compiled
    placed = {(p.op_type, p.device) for p in module.placement.ops if not p.is_view}
    assert {op for op, device in placed if device == "cmsis-nn"} == ON_CMSIS
    assert {op for op, device in placed if device == "c"} == {"QUANTIZE"}


@pytest.mark.parametrize("cpu", ["host", "cortex-m55", "cortex-m4"])
def test_the_export_equals_tflm(tmp_path, compiled, cpu):
    try:
        the_cpu = firmware.get_cpu(cpu)
        firmware.find_toolchain(the_cpu)
        if not the_cpu.is_host:
            firmware.find_qemu(the_cpu)
    except firmware.ToolchainMissingError as exc:
        pytest.skip(str(exc))
    model, module = compiled
    inputs = random_inputs(module.graph, 2)
    ref = tflm_run(model, inputs)
    with module.executor() as ex:
        ours = ex.run(inputs)
    got = run_export(module.export(tmp_path / "export"), cpu, inputs)
    for k, out in enumerate(got.outputs):
        np.testing.assert_array_equal(np.asarray(ours[k]).reshape(-1), ref.output(k).reshape(-1))
        np.testing.assert_array_equal(np.asarray(out).reshape(-1), ref.output(k).reshape(-1), err_msg=f"output {k}")
