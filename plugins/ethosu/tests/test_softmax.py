"""int8 SOFTMAX on the functional model: Vela lowers it to a max pooling, a LUT of 32-bit
exponentials, 32-bit elementwise MUL/ADD/SUB, CLZ, SHL, SHR and a REDUCE_SUM pooling; the result
must be bit-exact with tflite-micro's reference kernel."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import single_op_model
from tvmdevice.testing.oracle import tflm_run


def _compile(registry, model: bytes):
    from tvmdevice.aot.compiler import compile

    module = compile(model, "ethos-u, c", registry=registry)
    (p,) = [p for p in module.placement.ops if not p.is_view]
    assert p.device == "ethos-u", p.declined
    return module


def _assert_bit_exact(module, model: bytes, xs: list[np.ndarray]) -> None:
    with module.executor() as ex:
        (y,) = ex.run(xs)
    want = tflm_run(model, xs).output(0)
    np.testing.assert_array_equal(np.asarray(y).reshape(want.shape), want)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.sampled_from([(1, 10), (2, 12), (1, 3), (3, 35), (1, 1, 1, 64), (1, 3, 4, 17), (1, 2, 5, 16)]),
       scale=st.sampled_from([0.003, 0.02, 0.05, 0.1, 0.3, 0.7, 2.5]), zp=st.integers(-128, 127),
       beta=st.sampled_from([0.5, 1.0, 2.0]), seed=st.integers(0, 2**16))
def test_softmax_is_bit_exact_with_tflite_micro(registry, shape, scale, zp, beta, seed):
    model = single_op_model("SOFTMAX", shape, input_scale=scale, input_zero_point=zp, beta=beta)
    module = _compile(registry, model)
    rng = np.random.default_rng(seed)
    # random values, and rows of a narrow spread (a wide spread leaves one element near 1, the rest 0)
    wide = rng.integers(-128, 128, size=shape, dtype=np.int8)
    narrow = np.clip(int(rng.integers(-128, 128)) + rng.integers(-6, 7, size=shape), -128, 127).astype(np.int8)
    for x in (wide, narrow):
        _assert_bit_exact(module, model, [x])


@pytest.mark.parametrize("scale", [0.003, 0.05, 0.7, 2.5])
def test_softmax_of_every_pair_of_int8_values(registry, scale):
    """Every row (a, b) of two int8 values: each exponential, each sum and each reciprocal the
    lowering can meet for a depth of two."""
    model = single_op_model("SOFTMAX", (1, 256, 256, 2), input_scale=scale, input_zero_point=0)
    module = _compile(registry, model)
    values = np.arange(-128, 128, dtype=np.int8)
    x = np.stack(np.meshgrid(values, values, indexing="ij"), axis=-1)[None]
    _assert_bit_exact(module, model, [x])
