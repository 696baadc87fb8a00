"""RELU between two quantizations: Vela's single-precision rescale, declined where it rescales some
input unlike tflite-micro, bit-exact on every input where it runs."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import single_op_model

from tvmdevice_ethosu.relu_scale import vela_and_tflm_relu_multipliers

_DIFFERS = "the NPU's arithmetic differs from tflite-micro's"


def _outcome(registry, model: bytes) -> str:
    """The device that ran the operator, after comparing all 256 inputs with TFLM; or ethos-u's reason."""
    from tvmdevice.aot.compiler import compile
    from tvmdevice.testing.oracle import tflm_run

    module = compile(model, "ethos-u, c", registry=registry)
    (p,) = module.placement.ops
    if p.device != "ethos-u":
        return dict(p.declined)["ethos-u"]
    xs = [np.arange(-128, 128, dtype=np.int8).reshape(1, 256)]
    with module.executor() as ex:
        (y,) = ex.run(xs)
    np.testing.assert_array_equal(np.asarray(y).reshape(1, 256), tflm_run(model, xs).output(0))
    return "ethos-u"


def test_a_relu_whose_single_precision_rescale_differs_is_declined(registry):
    # measured before the check: 4 of the 256 inputs one step apart on the NPU
    assert vela_and_tflm_relu_multipliers(0.0078125, 0.05) == ((0x50000000, 33), (0x4FFFFFEC, 33))
    model = single_op_model("RELU", (1, 256), input_scale=0.0078125, input_zero_point=-17, out_scale=0.05,
                            out_zero_point=-128)
    reason = _outcome(registry, model)
    assert reason.startswith(_DIFFERS) and "0x50000000 >> 33" in reason and "0x4fffffec >> 33" in reason, reason


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scale=st.floats(0.003, 2.5),
       out_scale=st.one_of(st.none(), st.floats(0.003, 2.5), st.sampled_from([0.05, 0.0078125, 0.1])),
       zp=st.integers(-128, 127), out_zp=st.integers(-128, 127))
def test_relu_between_quantizations(registry, scale, out_scale, zp, out_zp):
    # (the builder gives RELU6 and RELU_N1_TO_1 the input's quantization: no rescale)
    params = {} if out_scale is None else {"out_scale": out_scale, "out_zero_point": out_zp}
    model = single_op_model("RELU", (1, 256), input_scale=scale, input_zero_point=zp, **params)
    outcome = _outcome(registry, model)
    assert outcome == "ethos-u" or outcome.startswith(_DIFFERS), outcome
