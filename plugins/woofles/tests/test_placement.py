"""What the NPU accepts: declared operators and limits, refusal reasons, and placement on a target."""

from __future__ import annotations

import numpy as np
import pytest
from _models import declared_model
from tvmdevice.aot.builder import demo_model, single_op_model
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.errors import NotSupportedError, Refusal
from tvmdevice.ops import analyze
from tvmdevice.testing.reference import run_graph

from tvmdevice_woofles.device import DEVICE_TYPE, OPERATORS


def check(registry, model: bytes, **options):
    """``(reason, graph, options)``: the NPU's decision on the model's operator, as placement makes it.

    The pre-filter (``check_operator``) passes the declared operator types; the
    decision is ``prepare_operator``'s, on the operator layer's op data.  The
    reason is ``None`` when it accepts, else its refusal's reason.
    """
    graph = load_tflite(model)
    opts = {**DEVICE_TYPE.default_options(), **options}
    op = graph.operators[0]
    reason = registry.check_operator(DEVICE_TYPE, opts, graph, op)
    if reason is None:
        try:
            registry.prepare_operator(DEVICE_TYPE, opts, graph, op, analyze(graph, op))
        except Refusal as refusal:
            reason = refusal.reason
    return reason, graph, opts


@pytest.mark.parametrize("key", sorted(OPERATORS))
def test_declared_operators_are_accepted(registry, key):
    reason, _, _ = check(registry, declared_model(key))
    assert reason is None


def test_every_declared_operator_has_a_kernel_and_no_other():
    from tvmdevice_woofles.ops import PACKERS

    assert set(PACKERS) == {key.partition(":")[0] for key in OPERATORS}


@pytest.mark.parametrize("op", ["SOFTMAX", "MUL", "MEAN", "LOGISTIC"])
def test_other_operators_are_refused_with_a_reason(registry, op):
    reason, graph, opts = check(registry, single_op_model(op))
    assert reason is not None and op in reason
    with pytest.raises(NotSupportedError, match=op):
        registry.prepare_operator(DEVICE_TYPE, opts, graph, graph.operators[0])


@pytest.mark.parametrize("model, options, limit", [
    (single_op_model("CONV_2D", (1, 12, 12, 2), dilation=3), {}, "max_dilation"),
    (single_op_model("DEPTHWISE_CONV_2D", (1, 12, 12, 2), dilation=(1, 3)), {}, "max_dilation"),
    (single_op_model("CONV_2D", (1, 6, 6, 3), filters=40), {"max_channels": 32}, "max_channels"),
    (single_op_model("FULLY_CONNECTED", (1, 50), units=8), {"max_channels": 32}, "max_channels"),
    (single_op_model("AVERAGE_POOL_2D", (1, 10, 10, 3), pool=5), {"max_kernel": 4}, "max_kernel"),
    (single_op_model("CONV_2D", (1, 16, 16, 8), filters=8), {"sram_kb": 1}, "sram_kb"),
])
def test_parameters_beyond_the_limits_are_refused(registry, model, options, limit):
    reason, graph, opts = check(registry, model, **options)
    assert reason is not None and limit in reason
    with pytest.raises(NotSupportedError):
        registry.prepare_operator(DEVICE_TYPE, opts, graph, graph.operators[0])


def test_raising_a_limit_accepts_the_operator(registry):
    model = single_op_model("CONV_2D", (1, 12, 12, 2), dilation=3)
    assert check(registry, model)[0] is not None
    assert check(registry, model, max_dilation=3)[0] is None


def test_add_broadcasts_over_six_dimensions_and_maximum_over_four(registry):
    # ADD's address generator walks TFLM's 6 broadcast dimensions; the compare unit's walks 4.
    assert check(registry, single_op_model("ADD", (2, 1, 2, 3, 1, 2), input2_shape=(1, 3, 1, 1, 2, 2)))[0] is None
    reason, _, _ = check(registry, single_op_model("MAXIMUM", (1, 2, 2, 2, 2), input2_shape=(2, 1, 1, 2)))
    assert reason == "broadcast rank 5 exceeds the address generator's 4 dimensions"
    # Inputs of one shape are one flat row whatever their rank.
    assert check(registry, single_op_model("MAXIMUM", (1, 2, 2, 2, 2)))[0] is None


def test_placement_moves_refused_operators_to_the_next_device(registry):
    from tvmdevice.aot.placement import place
    from tvmdevice.target import Target

    graph = load_tflite(demo_model())
    placement = place(graph, Target.parse("woofles, c", registry), registry)
    for p in placement.ops:
        if p.op_type == "RESHAPE":  # a view: it runs on no device
            assert p.is_view
            continue
        expected = "woofles" if p.op_type in OPERATORS else "c"
        assert p.device == expected, p
        if expected == "c":
            assert p.declined[0][0] == "woofles" and p.op_type in p.declined[0][1]


def test_demo_model_runs_bit_exact_on_woofles_and_host(registry):
    import tvmdevice

    model = demo_model()
    graph = load_tflite(model)
    x = np.random.default_rng(0).integers(-128, 128, graph.tensor(graph.inputs[0]).shape).astype(np.int8)
    module = tvmdevice.compile(model, "woofles, c", registry=registry)
    assert module.placement.summary.get("woofles", 0) >= 4
    with module.executor() as ex:
        out = ex.run([x])[0]
    np.testing.assert_array_equal(out, run_graph(graph, [x])[graph.outputs[0]])
