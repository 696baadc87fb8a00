"""int16 single-operator models (16-bit feature maps): pooling, ADD, SUB and MUL bit-exact with
tflite-micro, or declined naming what the functional model does not implement."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import single_op_model
from tvmdevice.testing.oracle import tflm_run

_SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_scale = st.sampled_from([0.0005, 0.003, 0.05, 0.5, 1.0, 2.5])


def run_and_compare(registry, model: bytes, seed: int) -> str:
    """Compile ``model`` on "ethos-u, c"; when ethos-u took its operator, compare runs with TFLM on
    int16 inputs over the whole range and on small values (where an average's ties are frequent).

    :returns: "ethos-u", or the reason ethos-u gave for declining the operator.
    """
    from tvmdevice.aot.compiler import compile

    module = compile(model, "ethos-u, c", registry=registry)
    (p,) = [p for p in module.placement.ops if not p.is_view]
    if p.device != "ethos-u":
        return p.declined[0][1]
    rng = np.random.default_rng(seed)
    shapes = [module.graph.tensors[i].shape for i in module.graph.inputs]
    with module.executor() as ex:
        for bound in (32768, 9):
            xs = [rng.integers(-bound, bound, size=s, dtype=np.int16) for s in shapes]
            (y,) = ex.run(xs)
            want = tflm_run(model, xs).output(0)
            np.testing.assert_array_equal(np.asarray(y).reshape(want.shape), want)
    return "ethos-u"


@_SETTINGS
@given(h=st.integers(2, 10), w=st.integers(2, 10), c=st.sampled_from([1, 5, 16, 21]),
       pool=st.sampled_from([(2, 2), (3, 3), (2, 3), (1, 4)]), stride=st.sampled_from([1, 2]),
       kind=st.sampled_from(["AVERAGE_POOL_2D", "MAX_POOL_2D"]), activation=st.sampled_from(["NONE", "RELU", "RELU6"]),
       scale=_scale, seed=st.integers(0, 99))
def test_int16_pooling_is_bit_exact(registry, h, w, c, pool, stride, kind, activation, scale, seed):
    if h < pool[0] or w < pool[1]:
        return
    model = single_op_model(kind, (1, h, w, c), input_dtype="int16", input_scale=scale, pool=pool, stride=stride,
                            padding="VALID", activation=activation, seed=seed)
    assert run_and_compare(registry, model, seed) == "ethos-u"


@_SETTINGS
@given(op_type=st.sampled_from(["ADD", "SUB", "MUL"]), shape=st.sampled_from([(1, 4, 5, 17), (1, 2, 3, 32), (1, 7, 1)]),
       broadcast=st.booleans(), scale=_scale, other_scale=st.booleans(), activation=st.sampled_from(["NONE", "RELU"]),
       seed=st.integers(0, 99))
def test_int16_add_sub_mul_are_bit_exact_or_declined_by_name(registry, op_type, shape, broadcast, scale, other_scale,
                                                             activation, seed):
    second = (*shape[:-1], 1) if broadcast else shape
    scale2 = scale * 0.37 if other_scale else scale
    model = single_op_model(op_type, shape, input_dtype="int16", input_scale=scale, input2_shape=second,
                            input2_scale=scale2, activation=activation, seed=seed)
    outcome = run_and_compare(registry, model, seed)
    if op_type == "MUL":  # ran, or declined for Vela's single-precision scale (mul_scale.py)
        assert outcome == "ethos-u" or outcome.startswith("the NPU's arithmetic differs"), outcome
    else:  # different input scales: Vela's 32-bit operand scaling, with the 16-bit input shift 15
        assert outcome == "ethos-u", outcome


def test_int16_mul_of_unit_scales_runs_and_one_of_differing_multipliers_is_declined(registry):
    ran = single_op_model("MUL", (1, 4, 5, 17), input_dtype="int16", input_scale=0.5, input2_scale=0.5)
    assert run_and_compare(registry, ran, 1) == "ethos-u"
    declined = single_op_model("MUL", (1, 4, 5, 17), input_dtype="int16", input_scale=0.05, input2_scale=0.05)
    assert run_and_compare(registry, declined, 1).startswith(
        "the NPU's arithmetic differs from tflite-micro's: Vela's MUL scale 0x40000080 >> 36")


def test_int16_pooling_over_padding_is_declined_naming_the_padding(registry):
    model = single_op_model("MAX_POOL_2D", (1, 5, 5, 4), input_dtype="int16", pool=(3, 3), stride=1, padding="SAME")
    outcome = run_and_compare(registry, model, 0)
    assert outcome.startswith("the functional model does not implement NPU_OP_POOL with this IFM_PAD (padding with "
                              "REDUCE_SUM or a 16- or 32-bit feature map)"), outcome


@pytest.mark.parametrize("op_type", ["CONCATENATION", "PAD", "PADV2", "SLICE", "TRANSPOSE"])
@pytest.mark.parametrize("scale", [0.003, 1.0])
def test_int16_operators_vela_lowers_to_16_bit_copies_are_bit_exact(registry, op_type, scale):
    model = single_op_model(op_type, input_dtype="int16", input_scale=scale, seed=3)
    assert run_and_compare(registry, model, 3) == "ethos-u"
