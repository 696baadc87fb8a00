"""End to end: every tensor bit-exact with TensorFlow Lite Micro, for each installed target combination."""

from __future__ import annotations

import numpy as np
import pytest

import tvmdevice
from tvmdevice.aot.builder import demo_model, single_op_model
from tvmdevice.testing.oracle import tflm_run

# 1 MiB of woofles SRAM holds every preloaded constant of the largest model here
# (the autoencoder's ~270 kB of weights do not fit the default 256 kB).
TARGETS = ["c", "cmsis-nn, c", "woofles -sram_kb=1024, c", "woofles -sram_kb=1024, cmsis-nn, c"]
MODELS = ["hello_world_int8.tflite", "micro_speech_int8.tflite", "kws_dscnn_int8.tflite",
          "ad_fc_autoencoder_int8.tflite"]


def _target_or_skip(target: str) -> str:
    names = set(tvmdevice.get_registry().device_names())
    missing = [d.split()[0] for d in target.split(",") if d.split()[0] not in names]
    if missing:
        pytest.skip(f"device(s) {missing} not installed (pip install tvmdevice-<name>)")
    return target


def _compare(model: bytes, target: str, seeds=(0, 1)) -> int:
    module = tvmdevice.compile(model, target, preserve_all_tensors=True)
    compared = 0
    with module.executor() as ex:
        ex.check_plan()
        for seed in seeds:
            rng = np.random.default_rng(seed)
            inputs = [rng.integers(-128, 128, size=module.graph.tensors[t].shape, dtype=np.int8)
                      for t in module.graph.inputs]
            outputs = ex.run(inputs)
            ref_run = tflm_run(model, inputs)
            for k in range(len(module.graph.outputs)):
                assert np.array_equal(outputs[k], ref_run.output(k)), f"output {k} differs"
            for i, tensor in enumerate(module.graph.tensors):
                if tensor.is_constant:
                    continue
                ref = ref_run.tensor(i, tensor.shape)
                ours = ex.tensor(i)
                assert np.array_equal(ours, ref), (
                    f"tensor #{i} {tensor.name!r} differs: max |diff| "
                    f"{np.abs(ours.astype(int) - ref.astype(int)).max()}")
                compared += 1
    return compared


@pytest.mark.models
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("model", MODELS)
def test_real_models_every_tensor(models_dir, model, target):
    _target_or_skip(target)
    path = models_dir / model
    if not path.exists():
        pytest.skip(f"{model} not in {models_dir}")
    assert _compare(path.read_bytes(), target) > 0


@pytest.mark.parametrize("target", TARGETS)
def test_demo_model_every_tensor(target):
    _target_or_skip(target)
    assert _compare(demo_model(seed=5), target, seeds=(0, 1, 2)) > 0


GENERATED = [
    ("CONV_2D", dict(input_shape=(1, 9, 9, 3), filters=5, kernel=3, stride=2, padding="SAME", activation="RELU6")),
    ("DEPTHWISE_CONV_2D", dict(input_shape=(1, 8, 8, 4), kernel=3, depth_multiplier=2, padding="VALID")),
    ("FULLY_CONNECTED", dict(input_shape=(3, 20), units=7, activation="RELU")),
    ("AVERAGE_POOL_2D", dict(input_shape=(1, 7, 7, 3), pool=3, stride=2, padding="SAME")),
    ("MAX_POOL_2D", dict(input_shape=(1, 6, 6, 2), pool=2)),
    ("ADD", dict(input_shape=(1, 4, 4, 3), input2_shape=(1, 1, 1, 3), input2_scale=0.1)),
    ("MUL", dict(input_shape=(1, 4, 4, 3), input2_scale=0.02)),
    ("SOFTMAX", dict(input_shape=(1, 10))),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op_type, params", GENERATED, ids=[g[0] for g in GENERATED])
def test_generated_single_op_models(target, op_type, params):
    _target_or_skip(target)
    assert _compare(single_op_model(op_type, **params), target, seeds=(0,)) > 0


@pytest.mark.models
def test_default_sram_spills_what_does_not_fit_to_the_next_device(models_dir):
    # The autoencoder's ~270 kB of weights exceed woofles' default 256 kB SRAM:
    # placement must keep woofles within budget and move the rest on.
    _target_or_skip("woofles, cmsis-nn, c")
    path = models_dir / "ad_fc_autoencoder_int8.tflite"
    if not path.exists():
        pytest.skip("autoencoder model not present")
    module = tvmdevice.compile(path, "woofles, cmsis-nn, c")
    devices = [p.device for p in module.placement.ops]
    assert "woofles" in devices and devices[-1] != "woofles"
    assert any("woofles memory full" in r for p in module.placement.ops for _, r in p.declined)
    assert _compare(path.read_bytes(), "woofles, cmsis-nn, c", seeds=(0,)) > 0
