"""An int16x8 model exported as C runs bit-exact with TensorFlow Lite Micro on the host and on Cortex-M.

One model holds every int16 operator of the host device (and SUB, the int16 QUANTIZE directions,
SOFTMAX int8 -> int16), laid out as the converter lays out int16x8 layers; TFLM runs it first (the
oracle), the Python executor must equal it, and the exported C must equal both on each CPU.
"""

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

CPUS = ["host", "cortex-m55", "cortex-m4"]


def int16x8_model() -> bytes:
    """int8 and float32 inputs; int16 conv, depthwise, ADD/SUB/MUL, pooling, FULLY_CONNECTED, TANH,
    LOGISTIC, SOFTMAX; QUANTIZE in every int16 direction; int8 SUB and SOFTMAX int8 -> int16."""
    b = ModelBuilder(name="int16x8", seed=11)
    x = b.input((1, 8, 8, 3), scale=0.02, zero_point=-3)
    f = b.input((1, 24), dtype="float32")
    q = b.quantize(x, 0.0004, 0, dtype="int16")
    c = b.conv2d(q, filters=6, kernel=3, activation="RELU")
    d = b.depthwise_conv2d(c, kernel=3, stride=1)
    a = b.add(c, d)
    s = b.sub(a, c, activation="RELU6")
    p = b.avg_pool2d(s, 2)
    m = b.max_pool2d(p, 2, stride=1, padding="SAME")
    mm = b.mul(m, m, out_scale=float(m.scale) ** 2 * 32768.0)
    fc = b.fully_connected(mm, 10, per_channel=True)
    b.output(b.quantize(b.softmax(fc), 1.0 / 256, -128, dtype="int8"))
    b.output(b.tanh(fc))
    b.output(b.logistic(fc))
    b.output(b.quantize(b.quantize(f, 0.002, 0, dtype="int16"), 0.0011, 0, dtype="int16"))
    x8 = b.quantize(x, 0.03, 4)
    b.output(b.softmax(b.sub(x8, x), out_dtype="int16"))
    return b.build()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    model = int16x8_model()
    module = tvmdevice.compile(model, "c", name="int16x8", preserve_all_tensors=True)
    return model, module, module.export(tmp_path_factory.mktemp("int16x8") / "int16x8")


def test_the_executor_equals_tflm_on_every_tensor(exported):
    model, module, _ = exported
    inputs = random_inputs(module.graph, seed=2)
    ref = tflm_run(model, inputs)
    with module.executor() as ex:
        ex.run(inputs)
        for i, t in enumerate(module.graph.tensors):
            if not t.is_constant:
                np.testing.assert_array_equal(ex.tensor(i), ref.tensor(i, t.shape), err_msg=f"tensor {i}")


@pytest.mark.parametrize("cpu", CPUS)
def test_the_export_equals_tflm(exported, cpu):
    require_tools(cpu)
    model, module, out = exported
    for seed in (0, 1):
        inputs = random_inputs(module.graph, seed=seed)
        ref = tflm_run(model, inputs)
        got = run_export(out, cpu, inputs)
        for k, value in enumerate(got.outputs):
            np.testing.assert_array_equal(value, ref.output(k), err_msg=f"{cpu}: output {k}, seed {seed}")
