"""Limits judged once, in placement, on the installed devices: scratch limits fall back, option bounds at parse."""

from __future__ import annotations

import numpy as np
import pytest

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.aot.schedule import HOST
from tvmdevice.device import Device
from tvmdevice.errors import TargetOptionError
from tvmdevice.target import Target
from tvmdevice.testing.oracle import tflm_run


def _installed_or_skip(*names: str) -> None:
    missing = [n for n in names if n not in tvmdevice.get_registry().device_names()]
    if missing:
        pytest.skip(f"device(s) {missing} not installed (pip install tvmdevice-<name>)")


def _conv_model() -> bytes:
    b = ModelBuilder(name="wide_conv", seed=7)
    x = b.input((1, 16, 16, 8), scale=0.05, zero_point=-2)
    b.output(b.conv2d(b.conv2d(x, filters=16, kernel=3, activation="RELU"), filters=8, kernel=1))
    return b.build()


def _run(module, model: bytes) -> None:
    rng = np.random.default_rng(0)
    x = [rng.integers(-128, 128, size=module.graph.tensors[t].shape, dtype=np.int8) for t in module.graph.inputs]
    with module.executor() as ex:
        out = ex.run(x)
        ex.check_plan()
    assert np.array_equal(out[0], tflm_run(model, x).output(0))


def test_cmsis_scratch_beyond_scratch_kb_falls_back_at_placement(monkeypatch):
    _installed_or_skip("cmsis-nn")
    model = _conv_model()
    roomy = tvmdevice.compile(model, "cmsis-nn, c")
    scratch = [p.call.scratch_bytes for p in roomy.placement.ops]
    assert [p.device for p in roomy.placement.ops] == ["cmsis-nn", "cmsis-nn"] and scratch[0] > 1024
    # Scratch is planned in the host arena with the activations: no AllocWorkspace at run time.
    assert roomy.plan.pools[HOST].largest_scratch == max(scratch)

    def no_workspace(self, nbytes, type_hint=None):
        raise AssertionError("scratch must come from the memory plan")

    monkeypatch.setattr(Device, "alloc_workspace", no_workspace)
    _run(roomy, model)
    small = tvmdevice.compile(model, "cmsis-nn -scratch_kb=1, c")
    first, second = small.placement.ops
    assert first.device == "c" and second.device == ("cmsis-nn" if scratch[1] <= 1024 else "c")
    (device, reason), = first.declined
    assert device == "cmsis-nn" and f"{scratch[0]} B of scratch" in reason and "1024 B" in reason
    _run(small, model)  # the executor is created and runs: no "out of scratch memory"


@pytest.mark.models
def test_kws_with_small_scratch_kb_compiles_and_runs(models_dir):
    _installed_or_skip("cmsis-nn")
    path = models_dir / "kws_dscnn_int8.tflite"
    if not path.exists():
        pytest.skip("kws_dscnn model not present")
    # 2 KiB: below the first CONV_2D's scratch (its bordered int16 image and im2col rows), above the
    # others' (the depthwise convolutions take none).
    module = tvmdevice.compile(path, "cmsis-nn -scratch_kb=2, c")
    fell_back = [p for p in module.placement.ops if p.device == "c"]
    assert fell_back and all("of scratch" in p.declined[0][1] for p in fell_back)
    _run(module, path.read_bytes())


def test_an_option_beyond_its_maximum_is_refused_when_the_target_is_parsed():
    _installed_or_skip("woofles")
    with pytest.raises(TargetOptionError, match=r"option -sram_kb=999999 exceeds its maximum 65536"):
        Target.parse("woofles -sram_kb=999999, c")
    option = tvmdevice.get_registry().device_type("woofles").option("sram_kb")
    assert option.maximum == 65536 and option.to_json()["maximum"] == 65536 and option.bounds == "1..65536"
