"""Single-operator models Vela compiles, on the functional model: bit-exact with tflite-micro, or
declined naming the command the model does not implement (never run with guessed semantics)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import single_op_model
from tvmdevice.testing.oracle import tflm_run

_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def run_and_compare(registry, model: bytes, seed: int) -> str:
    """Compile ``model`` on "ethos-u, c"; when ethos-u took its operator, compare one run with TFLM.

    :returns: the device that ran the operator, or the reason ethos-u gave for declining it.
    """
    from tvmdevice.aot.compiler import compile

    module = compile(model, "ethos-u, c", registry=registry)
    (p,) = [p for p in module.placement.ops if not p.is_view]
    if p.device != "ethos-u":
        return p.declined[0][1]
    rng = np.random.default_rng(seed)
    xs = [rng.integers(-128, 128, size=module.graph.tensors[i].shape, dtype=np.int8) for i in module.graph.inputs]
    with module.executor() as ex:
        ys = ex.run(xs)
    ref = tflm_run(model, xs)
    for k, y in enumerate(ys):
        np.testing.assert_array_equal(np.asarray(y).reshape(ref.output(k).shape), ref.output(k))
    return "ethos-u"


_padding = st.sampled_from(["SAME", "VALID"])
_activation = st.sampled_from(["NONE", "RELU", "RELU6"])
_zero_point = st.integers(-128, 127)
_scale = st.sampled_from([0.003, 0.05, 0.7, 2.5])


@_SETTINGS
@given(h=st.integers(3, 12), w=st.integers(3, 12), c=st.sampled_from([1, 3, 8, 16, 17, 40]),
       filters=st.sampled_from([1, 4, 8, 16, 20]), kernel=st.sampled_from([(1, 1), (3, 3), (2, 3), (5, 5)]),
       stride=st.sampled_from([1, 2, 3]), padding=_padding, activation=_activation, zp=_zero_point, scale=_scale,
       seed=st.integers(0, 99))
def test_conv_2d(registry, h, w, c, filters, kernel, stride, padding, activation, zp, scale, seed):
    if not _valid(h, w, kernel, 1, padding):
        return
    model = single_op_model("CONV_2D", (1, h, w, c), input_scale=scale, input_zero_point=zp, filters=filters,
                            kernel=kernel, stride=stride, padding=padding, activation=activation, seed=seed)
    outcome = run_and_compare(registry, model, seed)
    assert ran_or_declined_by_name(outcome), outcome


@_SETTINGS
@given(h=st.integers(3, 12), w=st.integers(3, 12), c=st.sampled_from([1, 4, 16, 24, 33]),
       kernel=st.sampled_from([(3, 3), (1, 1), (3, 2), (5, 5)]), stride=st.sampled_from([1, 2]),
       dilation=st.sampled_from([1, 2]), padding=_padding, activation=_activation, zp=_zero_point, scale=_scale,
       seed=st.integers(0, 99))
def test_depthwise_conv_2d(registry, h, w, c, kernel, stride, dilation, padding, activation, zp, scale, seed):
    if not _valid(h, w, kernel, dilation, padding):
        return
    model = single_op_model("DEPTHWISE_CONV_2D", (1, h, w, c), input_scale=scale, input_zero_point=zp, kernel=kernel,
                            stride=stride, dilation=dilation, padding=padding, activation=activation, seed=seed)
    outcome = run_and_compare(registry, model, seed)
    assert ran_or_declined_by_name(outcome), outcome


@_SETTINGS
@given(batches=st.integers(1, 3), depth=st.integers(1, 300), units=st.integers(1, 70), activation=_activation,
       per_channel=st.booleans(), zp=_zero_point, scale=_scale, seed=st.integers(0, 99))
def test_fully_connected(registry, batches, depth, units, activation, per_channel, zp, scale, seed):
    model = single_op_model("FULLY_CONNECTED", (batches, depth), input_scale=scale, input_zero_point=zp, units=units,
                            activation=activation, per_channel=per_channel, seed=seed)
    outcome = run_and_compare(registry, model, seed)
    assert ran_or_declined_by_name(outcome), outcome


def _valid(h: int, w: int, kernel, dilation: int, padding: str) -> bool:
    return padding == "SAME" or (h >= (kernel[0] - 1) * dilation + 1 and w >= (kernel[1] - 1) * dilation + 1)


def ran_or_declined_by_name(outcome: str) -> bool:
    """Ran bit-exact on the NPU, or declined naming the command the functional model does not implement."""
    return outcome == "ethos-u" or outcome.startswith("the functional model does not implement NPU_")


@_SETTINGS
@given(h=st.integers(2, 12), w=st.integers(2, 12), c=st.sampled_from([1, 5, 16, 21]),
       pool=st.sampled_from([(2, 2), (3, 3), (2, 3), (1, 4)]), stride=st.sampled_from([1, 2]), padding=_padding,
       kind=st.sampled_from(["AVERAGE_POOL_2D", "MAX_POOL_2D"]), activation=_activation, zp=_zero_point,
       scale=_scale, seed=st.integers(0, 99))
def test_pooling(registry, h, w, c, pool, stride, padding, kind, activation, zp, scale, seed):
    if not _valid(h, w, pool, 1, padding):
        return
    model = single_op_model(kind, (1, h, w, c), input_scale=scale, input_zero_point=zp, pool=pool, stride=stride,
                            padding=padding, activation=activation, seed=seed)
    outcome = run_and_compare(registry, model, seed)
    assert ran_or_declined_by_name(outcome), outcome
