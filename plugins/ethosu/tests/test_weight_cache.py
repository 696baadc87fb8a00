"""The host's functional model decodes each weight stream once (the read-only region never changes); an
export decodes per run, as the NPU's weight decoder does."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import ModelBuilder, single_op_model
from tvmdevice.testing.oracle import tflm_run


def _model(seed: int) -> bytes:
    b = ModelBuilder(name="cached", seed=seed)
    x = b.input((1, 6, 6, 8), scale=0.05, zero_point=3)
    y = b.conv2d(x, filters=8, kernel=3, activation="RELU")
    b.output(b.conv2d(y, filters=4, kernel=1))
    return b.build()


def test_each_weight_stream_is_decoded_once_and_the_results_stay_exact(registry):
    from tvmdevice.aot.compiler import compile

    from tvmdevice_ethosu import _ethosu

    rng = np.random.default_rng(7)
    for seed in (101, 102):  # two models of the same shapes: streams of the same layout, other bytes
        model = _model(seed)
        module = compile(model, "ethos-u, c", registry=registry)
        assert {p.device for p in module.placement.ops} == {"ethos-u"}
        before = _ethosu.weight_cache_entries()
        with module.executor() as ex:
            for run in range(3):
                xs = [rng.integers(-128, 128, size=module.graph.tensors[i].shape, dtype=np.int8)
                      for i in module.graph.inputs]
                (y,) = ex.run(xs)
                ref = tflm_run(model, xs).output(0)
                np.testing.assert_array_equal(np.asarray(y).reshape(ref.shape), ref, err_msg=f"seed {seed} run {run}")
                # the two convolutions' streams were kept on the first run, and found again after
                assert _ethosu.weight_cache_entries() == before + 2


def test_each_thread_keeps_its_own_cache(registry):
    from tvmdevice.aot.compiler import compile

    from tvmdevice_ethosu import _ethosu

    model = _model(103)
    module = compile(model, "ethos-u, c", registry=registry)
    xs = [np.zeros(module.graph.tensors[i].shape, np.int8) for i in module.graph.inputs]
    seen = []

    def run() -> None:
        seen.append(_ethosu.weight_cache_entries())
        with module.executor() as ex:
            ex.run(xs)
        seen.append(_ethosu.weight_cache_entries())

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert seen == [0, 2]  # a new thread starts with none; its two streams kept (freed when it ends)


@pytest.fixture
def per_block():
    """The calling thread decodes per OFM block while the test runs, as an exported model does."""
    from tvmdevice_ethosu import _ethosu

    _ethosu.weight_cache(False)
    try:
        yield
    finally:
        _ethosu.weight_cache(True)


_SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_SETTINGS
@given(h=st.integers(3, 9), w=st.integers(3, 9), c=st.sampled_from([1, 3, 16, 40]),
       filters=st.sampled_from([4, 20, 40, 72]), kernel=st.sampled_from([(1, 1), (3, 3), (2, 3)]),
       depthwise=st.booleans(), seed=st.integers(0, 99))
def test_per_ofm_block_decoding_is_exact(registry, per_block, h, w, c, filters, kernel, depthwise, seed):
    # the path an export runs: each OFM block's weights decoded into the functional model's memory when
    # the block runs (several blocks for the wider filters), bit-exact as the whole-operation decoding
    from tvmdevice.aot.compiler import compile

    from tvmdevice_ethosu import _ethosu

    if depthwise:
        model = single_op_model("DEPTHWISE_CONV_2D", (1, h, w, filters), input_scale=0.05, input_zero_point=3,
                                kernel=kernel, padding="SAME", seed=seed)
    else:
        model = single_op_model("CONV_2D", (1, h, w, c), input_scale=0.05, input_zero_point=3, filters=filters,
                                kernel=kernel, padding="SAME", seed=seed)
    module = compile(model, "ethos-u, c", registry=registry)
    assert [p.device for p in module.placement.ops] == ["ethos-u"]
    xs = [np.random.default_rng(seed).integers(-128, 128, size=module.graph.tensors[i].shape, dtype=np.int8)
          for i in module.graph.inputs]
    before = _ethosu.weight_cache_entries()
    with module.executor() as ex:
        (y,) = ex.run(xs)
    ref = tflm_run(model, xs).output(0)
    np.testing.assert_array_equal(np.asarray(y).reshape(ref.shape), ref)
    assert _ethosu.weight_cache_entries() == before  # nothing kept: decoded per block
