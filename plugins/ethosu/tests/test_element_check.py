"""Per-element operators checked on every int8 input (tvmdevice_ethosu.element_check): where Vela's table or
scales give another result than tflite-micro for some input, the operator is declined, naming it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import single_op_model

_DIFFERS = "the NPU's arithmetic differs from tflite-micro's"


def _outcome(registry, model: bytes) -> str:
    """ethos-u after comparing every int8 input value in every channel with TFLM; or ethos-u's reason."""
    from tvmdevice.aot.compiler import compile
    from tvmdevice.testing.oracle import tflm_run

    module = compile(model, "ethos-u, c", registry=registry)
    (p,) = module.placement.ops
    if p.device != "ethos-u":
        return dict(p.declined)["ethos-u"]
    (i,) = module.graph.inputs
    shape = module.graph.tensors[i].shape
    xs = [np.ascontiguousarray(np.broadcast_to(np.arange(-128, 128, dtype=np.int8).reshape(1, 256, 1, 1), shape))]
    with module.executor() as ex:
        (y,) = ex.run(xs)
    np.testing.assert_array_equal(np.asarray(y).reshape(shape), tflm_run(model, xs).output(0))
    return "ethos-u"


@pytest.mark.parametrize("op_type, params, first", [
    # measured before the check: 2 of the 256 inputs one step apart in each channel
    ("LOGISTIC", {"input_scale": 0.0078125}, "gives 0 for the input -1 (channel 0), tflite-micro -1"),
    # 12 of 768 elements apart: Vela's single-precision MUL scales
    ("PRELU", {"input_scale": 0.0078125, "input_zero_point": -17, "out_scale": 0.05, "out_zero_point": -128,
               "alpha_shape": (3,), "alpha_scale": 0.002}, "for the input 11 (channel 0), tflite-micro -124"),
])
def test_an_operator_whose_npu_result_differs_on_some_input_is_declined(registry, op_type, params, first):
    reason = _outcome(registry, single_op_model(op_type, (1, 256, 1, 3), **params))
    assert reason.startswith(_DIFFERS) and first in reason, reason


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(op_type=st.sampled_from(["LOGISTIC", "TANH", "HARD_SWISH", "LEAKY_RELU"]),
       scale=st.one_of(st.floats(0.003, 2.5), st.sampled_from([2.0 ** -k for k in range(2, 9)])),
       zp=st.integers(-128, 127), channels=st.sampled_from([1, 3, 16]))
def test_per_element_operators_run_bit_exact_on_every_input_or_are_declined(registry, op_type, scale, zp, channels):
    outcome = _outcome(registry, single_op_model(op_type, (1, 256, 1, channels), input_scale=scale,
                                                 input_zero_point=zp))
    assert outcome == "ethos-u" or outcome.startswith(_DIFFERS), outcome
