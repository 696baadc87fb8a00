"""cmsis-nn's int16x8 kernels and TRANSPOSE, bit-exact with tflite-micro and the host reference.

hypothesis draws every option the builder makes for each operator (shapes, strides, paddings,
dilations, groups, depth multipliers, per-channel or per-tensor weights, int64 / int32 / no bias,
fused activations, scales, broadcasting, softmax beta, permutations); inputs cover the whole int16
range.  Variants TFLM's Prepare refuses (the operator layer refuses them with TFLM's reason) are
discarded with ``assume``; anything cmsis-nn itself refused would fail the test.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from tflite import TensorType as TT
from tvmdevice import ops
from tvmdevice.aot.builder import ModelBuilder, single_op_model
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.errors import ModelError, Refusal

from conftest import MCPUS, assert_bit_exact

pytestmark = pytest.mark.parametrize("mcpu", MCPUS, ids=["host-packing", "m-profile"])

I16 = {"input_dtype": "int16"}
ACTIVATIONS = st.sampled_from(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
PAIR = st.tuples(st.integers(1, 3), st.integers(1, 3))
#: int16 activation scales as the converter makes them (symmetric, |x| <= a few units).
SCALES16 = st.floats(1e-4, 2e-3, allow_nan=False)


def accepted(model: bytes, key: str) -> bytes:
    """``model`` when TFLM's Prepare (the operator layer) accepts it, with the kernel key ``key``."""
    try:
        graph = load_tflite(model)
        op = graph.operators[0]
        data = ops.analyze(graph, op)
    except (ModelError, ValueError, Refusal):
        assume(False)
    assert ops.kernel_key(op.type, data) == key
    return model


def built(op_type: str, key: str, **params: Any) -> bytes:
    try:
        model = single_op_model(op_type, **params)
    except (ModelError, ValueError):
        assume(False)
    return accepted(model, key)


def with_int32_bias(model_builder: ModelBuilder) -> bytes:
    """The model with its int64 bias stored as int32 (same values): TFLM then sums in int32."""
    spec = model_builder.spec
    for t in spec.tensors:
        if t.type == TT.INT64:
            values = np.frombuffer(spec.buffers[t.buffer], dtype="<i8")
            spec.buffers[t.buffer] = values.astype("<i4").tobytes()
            t.type = TT.INT32
    return model_builder.build()


@st.composite
def conv16_params(draw, depthwise: bool) -> dict[str, Any]:
    c = draw(st.integers(1, 6))
    params: dict[str, Any] = dict(
        I16, input_shape=(draw(st.integers(1, 2)), draw(st.integers(1, 8)), draw(st.integers(1, 8)), c),
        kernel=(draw(st.integers(1, 4)), draw(st.integers(1, 4))), stride=draw(PAIR), dilation=draw(PAIR),
        padding=draw(st.sampled_from(["SAME", "VALID"])), activation=draw(ACTIVATIONS),
        per_channel=draw(st.booleans()), bias=draw(st.booleans()), input_scale=draw(SCALES16),
        seed=draw(st.integers(0, 100)))
    if depthwise:
        params["depth_multiplier"] = draw(st.integers(1, 3))
    else:
        groups = draw(st.sampled_from([g for g in (1, 2, 3) if c % g == 0]))
        params["groups"] = groups
        params["filters"] = groups * draw(st.integers(1, 4))
    return params


@given(conv16_params(depthwise=False))
def test_conv_2d_int16(mcpu, params):
    assert_bit_exact(built("CONV_2D", "CONV_2D:int16", **params), mcpu=mcpu)


@given(conv16_params(depthwise=True))
def test_depthwise_conv_2d_int16(mcpu, params):
    assert_bit_exact(built("DEPTHWISE_CONV_2D", "DEPTHWISE_CONV_2D:int16", **params), mcpu=mcpu)


@given(st.data())
def test_fully_connected_int16(mcpu, data):
    keep = data.draw(st.booleans())
    per_channel = data.draw(st.booleans())
    batch_dims = data.draw(st.sampled_from([(1,), (3,), (2, 2)] if keep and not per_channel else [(1,), (4,)]))
    params = dict(I16, input_shape=(*batch_dims, data.draw(st.integers(1, 48))), units=data.draw(st.integers(1, 20)),
                  per_channel=per_channel, keep_num_dims=keep and not per_channel, bias=data.draw(st.booleans()),
                  activation=data.draw(ACTIVATIONS), input_scale=data.draw(SCALES16),
                  seed=data.draw(st.integers(0, 100)))
    assert_bit_exact(built("FULLY_CONNECTED", "FULLY_CONNECTED:int16", **params), mcpu=mcpu)


# (FULLY_CONNECTED's rare off-by-one here was the float32 scale product, now the double one TFLM rounds.)
@pytest.mark.parametrize("layer", ["conv2d", "fully_connected"])
@given(seed=st.integers(0, 50), depth=st.integers(1, 40))
def test_an_int32_bias_sums_in_int32(mcpu, layer, seed, depth):
    b = ModelBuilder(seed=seed)
    x = b.input((1, 4, 4, depth) if layer == "conv2d" else (2, depth), scale=0.0005, dtype="int16")
    b.output(b.conv2d(x, filters=3) if layer == "conv2d" else b.fully_connected(x, 5))
    model = with_int32_bias(b)
    graph = load_tflite(model)
    assert ops.analyze(graph, graph.operators[0]).bias_bits == 32
    assert_bit_exact(model, mcpu=mcpu)


@pytest.mark.parametrize("op_type, max_rank", [("ADD", 6), ("MUL", 4)])
@given(st.data())
def test_add_mul_int16(mcpu, op_type, max_rank, data):
    out = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=max_rank)))

    def operand() -> tuple[int, ...]:
        rank = data.draw(st.integers(1, len(out)))
        return tuple(d if data.draw(st.booleans()) else 1 for d in out[len(out) - rank:])

    params = dict(I16, input_shape=operand(), input2_shape=operand(), input_scale=data.draw(SCALES16),
                  input2_scale=data.draw(SCALES16), activation=data.draw(ACTIVATIONS),
                  out_scale=data.draw(st.floats(1e-4, 0.05)), seed=data.draw(st.integers(0, 100)))
    assert_bit_exact(built(op_type, f"{op_type}:int16", **params), mcpu=mcpu)


@pytest.mark.parametrize("op_type", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@given(st.data())
def test_pooling_int16(mcpu, op_type, data):
    params = dict(I16, input_shape=(data.draw(st.integers(1, 2)), data.draw(st.integers(1, 9)),
                                    data.draw(st.integers(1, 9)), data.draw(st.integers(1, 12))),
                  pool=(data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))), stride=data.draw(PAIR),
                  padding=data.draw(st.sampled_from(["SAME", "VALID"])), activation=data.draw(ACTIVATIONS),
                  input_scale=data.draw(SCALES16))
    assert_bit_exact(built(op_type, f"{op_type}:int16", **params), mcpu=mcpu)


@given(st.data())
def test_softmax_int8_to_int16(mcpu, data):
    shape = data.draw(st.sampled_from([(1,), (2,), (3, 1)])) + (data.draw(st.integers(1, 64)),)
    params = dict(input_shape=shape, input_scale=data.draw(st.floats(0.01, 1.0)),
                  input_zero_point=data.draw(st.integers(-128, 127)), beta=data.draw(st.floats(0.25, 2.0)),
                  out_dtype="int16")
    assert_bit_exact(built("SOFTMAX", "SOFTMAX:int8->int16", **params), seeds=(0, 1, 2), mcpu=mcpu)


@given(st.data())
def test_softmax_int16(mcpu, data):
    shape = data.draw(st.sampled_from([(1,), (2,), (3, 1)])) + (data.draw(st.integers(1, 300)),)
    params = dict(I16, input_shape=shape, input_scale=data.draw(st.floats(2.0**-14, 2e-3)),
                  beta=data.draw(st.floats(0.25, 2.0)))
    assert_bit_exact(built("SOFTMAX", "SOFTMAX:int16", **params), seeds=(0, 1, 2), mcpu=mcpu)


@given(st.data())
def test_transpose(mcpu, data):
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)))
    perm = data.draw(st.permutations(range(len(shape))))
    b = ModelBuilder(seed=data.draw(st.integers(0, 50)))
    x = b.input(shape, scale=0.05 if data.draw(st.booleans()) else 0.0005,
                dtype=data.draw(st.sampled_from(["int8", "int16"])))
    b.output(b.transpose(x, perm))
    assert_bit_exact(accepted(b.build(), "TRANSPOSE"), mcpu=mcpu)
