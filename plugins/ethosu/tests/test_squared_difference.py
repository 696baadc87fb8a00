"""int8 SQUARED_DIFFERENCE on the functional model: Vela lowers it to 1x1 average poolings from 8 to
32 bits (the inputs shifted left by 7), 32-bit MULs by the input multipliers, a SUB, the square and a
final 32-bit MUL whose shift is above 31 (TFL rounding twice); bit-exact with tflite-micro."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import single_op_model
from tvmdevice.testing.oracle import tflm_run

_scale = st.sampled_from([0.003, 0.02, 0.05, 0.1, 0.7, 2.5])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.sampled_from([(1, 4, 5, 8), (1, 3, 3, 17), (2, 7)]), scale=_scale, scale2=_scale,
       zp=st.integers(-128, 127), zp2=st.integers(-128, 127), seed=st.integers(0, 2**16))
def test_squared_difference_is_bit_exact_with_tflite_micro(registry, shape, scale, scale2, zp, zp2, seed):
    from tvmdevice.aot.compiler import compile

    model = single_op_model("SQUARED_DIFFERENCE", shape, input_scale=scale, input_zero_point=zp,
                            input2_scale=scale2, input2_zero_point=zp2, seed=seed)
    module = compile(model, "ethos-u, c", registry=registry)
    (p,) = [p for p in module.placement.ops if not p.is_view]
    assert p.device == "ethos-u", p.declined
    rng = np.random.default_rng(seed)
    xs = [rng.integers(-128, 128, size=module.graph.tensors[i].shape, dtype=np.int8) for i in module.graph.inputs]
    with module.executor() as ex:
        (y,) = ex.run(xs)
    want = tflm_run(model, xs).output(0)
    np.testing.assert_array_equal(np.asarray(y).reshape(want.shape), want)
