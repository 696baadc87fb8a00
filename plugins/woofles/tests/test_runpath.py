"""The run path on woofles: copy steps (host <-> SRAM DMA) and Activate/Deactivate in C, so a plan of
woofles kernels and copies runs as one C call — with the device's counters and power states exactly
those of the same runs through the Device API hooks (trace mode)."""

from __future__ import annotations

import numpy as np
import tvmdevice
from tvmdevice.aot.builder import ModelBuilder

import tvmdevice_woofles

from _run import tflm_run


def _model() -> bytes:
    b = ModelBuilder(seed=9)
    x = b.input((1, 6, 6, 3), scale=0.04, zero_point=-3)
    y = b.conv2d(x, filters=4, kernel=3, padding="SAME", activation="RELU")
    b.output(b.add(b.depthwise_conv2d(y, kernel=3, padding="SAME"), y))
    return b.build()


def _inputs(module, seed: int) -> list[np.ndarray]:
    t = module.graph.tensors[module.graph.inputs[0]]
    return [np.random.default_rng(seed).integers(-128, 128, size=t.shape, dtype=np.int8)]


def _counters(ex) -> dict:
    c = tvmdevice_woofles.counters(ex.devices[0])
    c.pop("ns_in_state")  # host wall-clock: never equal twice
    return c


def test_a_woofles_plan_with_copies_runs_in_c_with_the_counters_of_the_hook_path():
    model = _model()
    module = tvmdevice.compile(model, "woofles, c")
    assert any(not hasattr(s, "op_index") for s in module.schedule.steps)  # it has copy steps
    with module.executor() as fast, module.executor(trace=True) as hooks:
        assert fast.runs_in_c and not hooks.runs_in_c
        for seed in range(3):
            inputs = _inputs(module, seed)
            want = tflm_run(model, inputs)
            for ex in (fast, hooks):
                out = ex.run(inputs)[0]
                np.testing.assert_array_equal(out, want.reshape(out.shape))
            assert _counters(fast) == _counters(hooks)
        c = _counters(fast)
        assert c["transitions"]["activate"] == c["transitions"]["deactivate"] == 3
        assert c["dma_transfers"] == 3 * 2 + len(module.schedule.constants) and c["power_state"] == "SLEEP"


def test_the_c_lifecycle_charges_host_time_to_the_active_state():
    module = tvmdevice.compile(_model(), "woofles, c")
    with module.executor() as ex:
        before = tvmdevice_woofles.counters(ex.devices[0])["ns_in_state"]["ACTIVE"]
        for _ in range(5):
            ex.run(_inputs(module, 0))
        assert ex.runs_in_c
        assert tvmdevice_woofles.counters(ex.devices[0])["ns_in_state"]["ACTIVE"] > before


def test_the_copy_kernels_are_the_plugins_prepare_copy_calls(registry):
    woofles = registry.device_type("woofles")
    up = registry.prepare_copy(woofles, woofles.default_options(), 100, True)
    down = registry.prepare_copy(woofles, woofles.default_options(), 100, False)
    assert (up.name, down.name) == ("tvmd_woofles_copy_to_device", "tvmd_woofles_copy_from_device")
    assert up.params.values["nbytes"] == down.params.values["nbytes"] == 100
    assert registry.prepare_copy(registry.device_type("c"), {}, 100, True) is None
