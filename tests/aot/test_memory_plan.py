"""Static memory planning: no live buffers overlap, memory is reused, arenas beat TFLM's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder, demo_model
from tvmdevice.aot.memory_plan import ARENA_ALIGNMENT
from tvmdevice.aot.schedule import HOST

#: TFLite Micro's recorded arena for each model (shared/models/README.md).
TFLM_ARENA = {
    "hello_world_int8.tflite": 1504,
    "micro_speech_int8.tflite": 7584,
    "kws_dscnn_int8.tflite": 24272,
    "ad_fc_autoencoder_int8.tflite": 3984,
}


def _check_no_overlap(module) -> None:
    pool = module.plan.pools[HOST]
    bufs = [b for b in module.schedule.buffers if b.memory == HOST]
    for i, a in enumerate(bufs):
        oa = pool.offsets[a.key]
        assert oa % ARENA_ALIGNMENT == 0
        assert oa + a.nbytes <= pool.size
        for b in bufs[i + 1:]:
            if a.last < b.first or b.last < a.first:
                continue
            ob = pool.offsets[b.key]
            assert oa + a.nbytes <= ob or ob + b.nbytes <= oa, (a, b)


def test_demo_model_reuses_memory(registry):
    module = tvmdevice.compile(demo_model(), "c", registry=registry)
    _check_no_overlap(module)
    total = sum(b.nbytes for b in module.schedule.buffers)
    assert module.plan.pools[HOST].size < total


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["conv", "pool", "add", "dw"]), min_size=1, max_size=6),
       st.integers(4, 12), st.integers(1, 6))
def test_random_chains_never_overlap_live_buffers(ops, size, channels):
    from tvmdevice.registry import Registry

    b = ModelBuilder(name="chain", seed=size)
    x = b.input((1, size, size, channels), 0.05, 0)
    for kind in ops:
        if kind == "conv":
            x = b.conv2d(x, filters=channels, kernel=3)
        elif kind == "dw":
            x = b.depthwise_conv2d(x, kernel=3)
        elif kind == "pool":
            x = b.max_pool2d(x, pool=2, stride=1, padding="SAME")
        else:
            x = b.add(x, b.conv2d(x, filters=channels, kernel=1))
    b.output(x)
    module = tvmdevice.compile(b.build(), "c", registry=Registry(autoload=False))
    _check_no_overlap(module)


@pytest.mark.models
@pytest.mark.parametrize("model", sorted(TFLM_ARENA))
def test_host_arena_no_larger_than_tflm(models_dir, model, registry):
    path = models_dir / model
    if not path.exists():
        pytest.skip(f"{model} not in {models_dir}")
    module = tvmdevice.compile(path, "c", registry=registry)
    _check_no_overlap(module)
    assert module.plan.pools[HOST].size <= TFLM_ARENA[model]
