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


def _check_allocations(module) -> None:
    """Every planned buffer listed once, at its planned place, over the operators that use it."""
    plan, schedule = module.plan, module.schedule
    allocs = plan.allocations()
    assert len(allocs) == len(schedule.buffers)
    steps = schedule.steps
    by_key = {(a.pool, a.kind, a.tensor if a.kind == "tensor" else a.operator): a for a in allocs}
    n_ops = len(module.graph.operators)
    for use in schedule.buffers:
        kind, index, memory = use.key
        a = by_key[(memory, kind, index)]
        pool = plan.pools[memory]
        assert a.size == use.nbytes
        if memory == HOST:
            assert a.offset == pool.offsets[use.key] and a.block is None
        else:
            assert a.block == pool.block_of[use.key] and a.offset == sum(pool.blocks[:a.block])
            assert a.offset + a.size <= pool.size
        assert 0 <= a.first_op <= a.last_op < n_ops
        for i, step in enumerate(steps):
            if use.first <= i <= use.last and hasattr(step, "op_index"):
                assert a.first_op <= step.op_index <= a.last_op, (a, step)
        if kind == "scratch":
            assert a.first_op == a.last_op == a.operator == index


def test_allocations_list_every_buffer_at_its_offset_and_lifetime(registry):
    from plugin_fixtures import load_fixture_module

    registry.register(load_fixture_module("fixture_picky"), "picky")
    b = ModelBuilder(name="skip", seed=2)
    x = b.input((1, 6, 6, 3), 0.05, 0)
    y = b.conv2d(x, filters=4, kernel=3, padding="SAME")
    z = b.conv2d(y, filters=4, kernel=1)
    b.output(b.add(y, b.max_pool2d(z, pool=1)))
    module = tvmdevice.compile(b.build(), "picky -scratch=100, c", registry=registry)
    _check_allocations(module)
    allocs = module.plan.allocations()
    scratch = [a for a in allocs if a.kind == "scratch"]
    assert [a.operator for a in scratch] and all(a.size == 100 for a in scratch)
    y_alloc = next(a for a in allocs if a.tensor == module.graph.operators[0].outputs[0])
    assert (y_alloc.first_op, y_alloc.last_op) == (0, 3)  # written by #0, read by the ADD #3
    inp = next(a for a in allocs if a.tensor == module.graph.inputs[0])
    assert inp.first_op == 0
    assert {a.to_json()["pool"] for a in allocs} == {"host"}


def test_allocations_of_a_separate_memory_are_its_blocks(registry):
    from tvmdevice.registry import Registry

    full = Registry()
    if "woofles" not in full.device_names():
        pytest.skip("device woofles not installed (pip install tvmdevice-woofles)")
    module = tvmdevice.compile(demo_model(), "woofles, c", registry=full)
    assert "woofles" in module.plan.pools
    _check_allocations(module)
    assert any(a.pool == "woofles" and a.block is not None for a in module.plan.allocations())


def test_allocations_when_every_tensor_is_kept_last_to_the_end(registry):
    module = tvmdevice.compile(demo_model(), "c", registry=registry, preserve_all_tensors=True)
    _check_allocations(module)
    last = len(module.graph.operators) - 1
    assert all(a.last_op == last for a in module.plan.allocations() if a.kind == "tensor")
