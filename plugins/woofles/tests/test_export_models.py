"""Models using the window loader's PAD and the 16-bit datapath, exported as C with ``woofles, c``
(``tvmdevice export``) and run on the host and on Cortex-M55 (QEMU): every output equal to
tflite-micro's, with the NPU's operators placed on woofles."""

from __future__ import annotations

import numpy as np
import pytest
import tvmdevice
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.export import run_export
from tvmdevice.testing.firmware import require_tools
from tvmdevice.testing.oracle import tflm_run

CPUS = ["host", "cortex-m55"]


def int8_padded() -> bytes:
    """Explicit padding as converters emit it: PAD then VALID convolutions, and a PADV2 with a value."""
    b = ModelBuilder(name="woofles_pad_int8", seed=21)
    x = b.input((1, 7, 6, 3), scale=0.04, zero_point=-5)
    c = b.conv2d(b.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]]), filters=8, kernel=3, padding="VALID", activation="RELU")
    d = b.depthwise_conv2d(b.padv2(c, [[0, 0], [2, 0], [0, 1], [0, 0]], -3), kernel=3, padding="VALID")
    b.output(b.max_pool2d(b.add(d, d), 2))
    return b.build()


def int16x8_padded() -> bytes:
    """int16 activations through PAD, convolutions, ADD, pooling and FULLY_CONNECTED."""
    b = ModelBuilder(name="woofles_int16", seed=22)
    x = b.input((1, 8, 8, 3), scale=0.0005, dtype="int16")
    p = b.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]])
    c = b.conv2d(p, filters=6, kernel=3, padding="VALID", activation="RELU")
    d = b.depthwise_conv2d(c, kernel=3, padding="SAME")
    a = b.add(c, d)
    m = b.max_pool2d(b.avg_pool2d(a, 2), 2, stride=1, padding="SAME")
    b.output(b.fully_connected(m, 10, per_channel=True))
    return b.build()


MODELS = {"int8-pad": int8_padded, "int16x8": int16x8_padded}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    done = {}
    for name, make in MODELS.items():
        model = make()
        module = tvmdevice.compile(model, "woofles, c", name=name.replace("-", "_"))
        done[name] = (model, module, module.export(tmp_path_factory.mktemp(name) / name))
    return done


def _inputs(graph, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for t in (graph.tensors[i] for i in graph.inputs):
        info = np.iinfo(t.dtype)
        out.append(rng.integers(info.min, info.max, size=t.shape, endpoint=True, dtype=t.dtype))
    return out


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_operator_is_placed_on_the_npu(exported, name):
    _, module, _ = exported[name]
    assert {p.device for p in module.placement.ops if not p.is_view} == {"woofles"}, module.placement


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_export_equals_tflm(exported, name, cpu):
    require_tools(cpu)
    model, module, out = exported[name]
    for seed in (0, 1):
        inputs = _inputs(module.graph, seed)
        ref = tflm_run(model, inputs)
        with module.executor() as ex:
            ours = ex.run(inputs)
        got = run_export(out, cpu, inputs)
        for k, value in enumerate(got.outputs):
            np.testing.assert_array_equal(ours[k].reshape(ref.output(k).shape), ref.output(k))
            np.testing.assert_array_equal(value, ref.output(k), err_msg=f"{name} on {cpu}: output {k}, seed {seed}")
        assert got.devices["woofles"]["kernel_calls"] > 0
