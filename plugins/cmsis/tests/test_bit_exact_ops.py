"""Bit-exact with tflite-micro and the host reference on generated single-operator models.

hypothesis drives every option the kernels support: shapes, strides,
paddings, dilations, groups, depth multipliers, zero points, scales, fused
activations, bias presence, per-channel weights and broadcasting.  Variants
that TFLM itself rejects (the model does not load in the host reference, which
mirrors TFLM's Prepare checks) are discarded with ``assume``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import single_op_model
from tvmdevice.errors import ModelError

from conftest import MCPUS, assert_bit_exact

# Every test runs each packing: -mcpu="" (the host's) and -mcpu=cortex-m55 (CMSIS-NN's operands).
pytestmark = pytest.mark.parametrize("mcpu", MCPUS, ids=["host-packing", "m-profile"])

ACTIVATIONS = st.sampled_from(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
ZERO_POINTS = st.integers(-128, 127)
SCALES = st.floats(0.004, 0.25, allow_nan=False)
PAIR = st.tuples(st.integers(1, 3), st.integers(1, 3))


def model_or_reject(op_type: str, **params: Any) -> bytes:
    try:
        model = single_op_model(op_type, **params)
        from tvmdevice.aot.frontend import load_tflite

        load_tflite(model)  # runs the host reference's Prepare checks (TFLM's)
    except (ModelError, ValueError):
        assume(False)
    return model


@st.composite
def conv_params(draw, depthwise: bool) -> dict[str, Any]:
    n, h, w = draw(st.integers(1, 2)), draw(st.integers(1, 9)), draw(st.integers(1, 9))
    c = draw(st.integers(1, 6))
    params: dict[str, Any] = dict(
        input_shape=(n, h, w, c), kernel=(draw(st.integers(1, 4)), draw(st.integers(1, 4))), stride=draw(PAIR),
        dilation=draw(PAIR), padding=draw(st.sampled_from(["SAME", "VALID"])), activation=draw(ACTIVATIONS),
        per_channel=draw(st.booleans()), bias=draw(st.booleans()), input_scale=draw(SCALES),
        input_zero_point=draw(ZERO_POINTS), out_zero_point=draw(ZERO_POINTS), seed=draw(st.integers(0, 100)))
    if depthwise:
        params["depth_multiplier"] = draw(st.integers(1, 3))
    else:
        groups = draw(st.sampled_from([g for g in (1, 2, 3) if c % g == 0]))
        params["groups"] = groups
        params["filters"] = groups * draw(st.integers(1, 4))
    return params


@given(conv_params(depthwise=False))
def test_conv_2d(mcpu, params):
    assert_bit_exact(model_or_reject("CONV_2D", **params), mcpu=mcpu)


@given(conv_params(depthwise=True))
def test_depthwise_conv_2d(mcpu, params):
    assert_bit_exact(model_or_reject("DEPTHWISE_CONV_2D", **params), mcpu=mcpu)


@st.composite
def depthwise_channel_params(draw) -> dict[str, Any]:
    """Channel counts 1..70 (every block and tail of the vector loops: 16, 8 and 1..7 channels on AVX2, 32 and
    masked tails on AVX-512), depth multipliers 1..4, small images whose every pixel is near a border."""
    h, w = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    return dict(
        input_shape=(1, h, w, draw(st.integers(1, 70))), kernel=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
        depth_multiplier=draw(st.integers(1, 4)), stride=draw(PAIR), dilation=draw(PAIR),
        padding=draw(st.sampled_from(["SAME", "VALID"])), activation=draw(ACTIVATIONS),
        per_channel=draw(st.booleans()), bias=draw(st.booleans()), input_zero_point=draw(ZERO_POINTS),
        out_zero_point=draw(ZERO_POINTS), seed=draw(st.integers(0, 100)))


@given(depthwise_channel_params())
@settings(max_examples=max(1, settings().max_examples // 3))
def test_depthwise_channel_counts(mcpu, params):
    assert_bit_exact(model_or_reject("DEPTHWISE_CONV_2D", **params), mcpu=mcpu)


@given(st.data())
def test_fully_connected(mcpu, data):
    keep = data.draw(st.booleans())
    per_channel = data.draw(st.booleans())
    batch_dims = data.draw(st.sampled_from([(1,), (3,), (2, 2)] if keep and not per_channel else [(1,), (4,)]))
    depth = data.draw(st.integers(1, 48))
    params = dict(input_shape=(*batch_dims, depth), units=data.draw(st.integers(1, 20)), per_channel=per_channel,
                  keep_num_dims=keep and not per_channel, bias=data.draw(st.booleans()),
                  activation=data.draw(ACTIVATIONS), input_scale=data.draw(SCALES),
                  input_zero_point=data.draw(ZERO_POINTS), out_zero_point=data.draw(ZERO_POINTS),
                  seed=data.draw(st.integers(0, 100)))
    assert_bit_exact(model_or_reject("FULLY_CONNECTED", **params), mcpu=mcpu)


@pytest.mark.parametrize("op_type", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@given(st.data())
def test_pooling(mcpu, op_type, data):
    params = dict(input_shape=(data.draw(st.integers(1, 2)), data.draw(st.integers(1, 9)),
                               data.draw(st.integers(1, 9)), data.draw(st.integers(1, 20))),
                  pool=(data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))), stride=data.draw(PAIR),
                  padding=data.draw(st.sampled_from(["SAME", "VALID"])), activation=data.draw(ACTIVATIONS),
                  input_scale=data.draw(SCALES), input_zero_point=data.draw(ZERO_POINTS))
    assert_bit_exact(model_or_reject(op_type, **params), mcpu=mcpu)


@given(st.data())
def test_softmax(mcpu, data):
    shape = data.draw(st.sampled_from([(1,), (2,), (1, 1), (3, 1)])) + (data.draw(st.integers(1, 64)),)
    params = dict(input_shape=shape, input_scale=data.draw(st.floats(0.01, 1.0)),
                  input_zero_point=data.draw(ZERO_POINTS), beta=data.draw(st.floats(0.25, 2.0)))
    assert_bit_exact(model_or_reject("SOFTMAX", **params), seeds=(0, 1, 2), mcpu=mcpu)


@st.composite
def broadcast_shapes(draw, max_rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    out = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=max_rank)))

    def operand() -> tuple[int, ...]:
        rank = draw(st.integers(1, len(out)))
        return tuple(d if draw(st.booleans()) else 1 for d in out[len(out) - rank:])

    return operand(), operand()


@pytest.mark.parametrize("op_type, max_rank", [("ADD", 6), ("SUB", 6), ("MUL", 4)])
@given(st.data())
def test_add_sub_mul_broadcasting(mcpu, op_type, max_rank, data):
    s1, s2 = data.draw(broadcast_shapes(max_rank))
    params = dict(input_shape=s1, input2_shape=s2, input_scale=data.draw(SCALES),
                  input_zero_point=data.draw(ZERO_POINTS), input2_scale=data.draw(SCALES),
                  input2_zero_point=data.draw(ZERO_POINTS), activation=data.draw(ACTIVATIONS),
                  out_scale=data.draw(st.floats(0.01, 0.5)), out_zero_point=data.draw(ZERO_POINTS))
    assert_bit_exact(model_or_reject(op_type, **params), mcpu=mcpu)


@pytest.mark.parametrize("op_type", ["MAXIMUM", "MINIMUM"])
@given(st.data())
def test_maximum_minimum_broadcasting(mcpu, op_type, data):
    s1, s2 = data.draw(broadcast_shapes(4))
    assert_bit_exact(model_or_reject(op_type, input_shape=s1, input2_shape=s2, seed=data.draw(st.integers(0, 99))),
                     mcpu=mcpu)


@given(st.integers(-128, 127), st.integers(1, 3), st.integers(1, 70), st.integers(0, 50))
def test_fully_connected_weights_zero_point(mcpu, weights_zero_point, batches, depth, seed):
    """Per-tensor weights with a zero point: TFLM adds the weights offset (the builder writes 0)."""
    from tvmdevice.aot.builder import ModelBuilder

    b = ModelBuilder(seed=seed)
    x = b.input((batches, depth), scale=0.03, zero_point=5)
    y = b.output(b.fully_connected(x, 9, activation="RELU"))
    weights = b.spec.operators[0].inputs[1]
    b.spec.tensors[weights].zero_points = [weights_zero_point]
    assert y.index == b.spec.operators[0].outputs[0]
    assert_bit_exact(b.build(), mcpu=mcpu)


@pytest.mark.parametrize("channels, multiplier", [(2, 1), (1, 3)])
def test_depthwise_filter_longer_than_the_float_chunk(mcpu, channels, multiplier):
    """272 taps: more than the vector depthwise loop keeps pointers for, so the
    accelerated path hands such filters to the portable loop."""
    model = model_or_reject("DEPTHWISE_CONV_2D", input_shape=(1, 17, 16, channels), kernel=(17, 16),
                            padding="VALID", depth_multiplier=multiplier, input_zero_point=-7)
    assert_bit_exact(model, mcpu=mcpu)


def test_grouped_conv_with_odd_reduction_and_many_columns(mcpu):
    """Odd k (pair padding), more than 64 output columns (wide GEMM tiles plus a remainder)."""
    assert_bit_exact(model_or_reject("CONV_2D", input_shape=(1, 5, 6, 3), filters=81, kernel=(3, 1), padding="SAME",
                                     per_channel=True, input_zero_point=11))
