"""The model builder writes real TFLite models: TFLM runs them and the
frontend reads back exactly what was asked for."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tvmdevice.aot.builder import SINGLE_OP_DEFAULT_SHAPES, ModelBuilder, demo_model, single_op_model
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.optable.tflm import BEYOND_TFLM
from tvmdevice.testing.oracle import litert_run


def _random_inputs(graph, seed: int = 0):
    rng = np.random.default_rng(seed)
    out = []
    for i in graph.inputs:
        t = graph.tensors[i]
        out.append(rng.normal(0, 2, t.shape).astype(np.float32) if t.dtype == np.float32
                   else rng.integers(-128, 128, t.shape).astype(np.int8))
    return out


@pytest.mark.parametrize("op_type", sorted(SINGLE_OP_DEFAULT_SHAPES))
def test_single_op_model_runs_in_tflm_and_round_trips(op_type, tflm_invoke):
    model = single_op_model(op_type)
    assert model[4:8] == b"TFL3"
    graph = load_tflite(model)
    assert [op.type for op in graph.operators] == [op_type]
    inputs = _random_inputs(graph)
    if op_type in BEYOND_TFLM:  # TFLM has no kernel for it: LiteRT runs it
        pytest.importorskip("ai_edge_litert")
        (out,) = litert_run(model, inputs)
    else:
        (out,) = tflm_invoke(model, inputs)
    expected = graph.tensors[graph.outputs[0]]
    assert tuple(out.shape) == tuple(expected.shape)
    assert out.dtype == expected.dtype


def test_demo_model_structure_and_tflm(tflm_invoke):
    model = demo_model()
    graph = load_tflite(model)
    assert [op.type for op in graph.operators] == [
        "CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "AVERAGE_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"]
    assert graph.tensors[graph.inputs[0]].shape == (1, 16, 16, 1)
    assert graph.tensors[graph.outputs[0]].shape == (1, 10)
    (probs,) = tflm_invoke(model, _random_inputs(graph, 1))
    # Softmax output in real units sums to ~1 (1/256 scale, -128 zero point).
    assert abs(((probs.astype(np.int32) + 128) / 256.0).sum() - 1.0) < 0.05


def test_builder_is_deterministic_per_seed():
    assert demo_model(seed=1) == demo_model(seed=1)
    assert demo_model(seed=1) != demo_model(seed=2)


def test_build_without_output_is_an_error():
    b = ModelBuilder()
    b.input((1, 4))
    with pytest.raises(ValueError, match="output"):
        b.build()


def test_weights_and_bias_quantization_is_realistic():
    b = ModelBuilder(seed=3)
    x = b.input((1, 8, 8, 3), scale=0.02, zero_point=-5)
    b.output(b.conv2d(x, filters=6, kernel=(3, 3), per_channel=True))
    graph = load_tflite(b.build())
    _, w, bias = graph.op_inputs(graph.operators[0])
    assert w.dtype == np.int8 and w.quant.per_channel and w.quant.axis == 0 and w.quant.scale.size == 6
    assert np.all(w.quant.zero_point == 0)
    assert np.all(np.abs(w.data.astype(int)) <= 127)
    expected_bias_scale = np.float32(0.02) * w.quant.scale.astype(np.float32)
    np.testing.assert_array_equal(bias.quant.scale, expected_bias_scale)
    assert bias.dtype == np.int32 and np.all(bias.quant.zero_point == 0)


def test_constants_are_aligned_in_the_file():
    model = single_op_model("FULLY_CONNECTED", (1, 13), units=7)
    import tflite

    m = tflite.Model.GetRootAs(model, 0)
    for i in range(m.BuffersLength()):
        buf = m.Buffers(i)
        if buf.DataLength():
            # Offset of the first data byte within the file.
            start = buf._tab.Vector(buf._tab.Offset(4))
            assert start % 16 == 0


@settings(max_examples=25, deadline=None)
@given(kernel=st.tuples(st.integers(1, 4), st.integers(1, 4)), stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)), padding=st.sampled_from(["SAME", "VALID"]),
       act=st.sampled_from(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]), depthwise=st.booleans(),
       mult=st.integers(1, 3), per_channel=st.booleans())
def test_conv_options_round_trip(kernel, stride, dilation, padding, act, depthwise, mult, per_channel):
    b = ModelBuilder(seed=0)
    x = b.input((1, 12, 12, 2), scale=0.03, zero_point=1)
    if depthwise:
        y = b.depthwise_conv2d(x, kernel=kernel, depth_multiplier=mult, stride=stride, dilation=dilation,
                               padding=padding, activation=act, per_channel=per_channel)
    else:
        y = b.conv2d(x, filters=3, kernel=kernel, stride=stride, dilation=dilation, padding=padding,
                     activation=act, per_channel=per_channel)
    b.output(y)
    graph = load_tflite(b.build())
    op = graph.operators[0]
    assert op.type == ("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D")
    expected = {"padding": padding, "stride_h": stride[0], "stride_w": stride[1], "dilation_h_factor": dilation[0],
                "dilation_w_factor": dilation[1], "fused_activation": act}
    if depthwise:
        expected["depth_multiplier"] = mult
    assert op.options == expected
    w = graph.tensors[op.inputs[1]]
    assert w.quant.per_channel == (per_channel and w.quant.scale.size > 1)
    out = graph.tensors[op.outputs[0]]
    for dim, (size, k, s, d) in enumerate(zip((12, 12), kernel, stride, dilation), start=1):
        eff = (k - 1) * d + 1
        want = math.ceil(size / s) if padding == "SAME" else (size - eff) // s + 1
        assert out.shape[dim] == want


def test_other_options_round_trip():
    b = ModelBuilder(seed=0)
    x = b.input((2, 6, 6, 4), scale=0.05, zero_point=3)
    p = b.max_pool2d(x, pool=(3, 2), stride=(1, 2), padding="SAME", activation="RELU6")
    r = b.reshape(p, (2, -1))
    f = b.fully_connected(r, 5, activation="RELU", keep_num_dims=True)
    s = b.softmax(f, beta=0.5)
    c = b.concatenation([s, s], axis=-1)
    m = b.mean(b.pad(b.reshape(c, (2, 5, 2)), [[0, 0], [1, 2], [0, 1]]), axes=[1], keep_dims=False)
    b.output(m)
    graph = load_tflite(b.build())
    opts = {op.type: op.options for op in graph.operators}
    assert opts["MAX_POOL_2D"] == {"padding": "SAME", "stride_h": 1, "stride_w": 2, "filter_height": 3,
                                   "filter_width": 2, "fused_activation": "RELU6"}
    assert opts["FULLY_CONNECTED"] == {"fused_activation": "RELU", "keep_num_dims": True}
    assert opts["SOFTMAX"] == {"beta": 0.5}
    assert opts["CONCATENATION"] == {"axis": -1, "fused_activation": "NONE"}
    assert opts["MEAN"] == {"keep_dims": False}
    assert opts["PAD"] == {}
    reshapes = [op for op in graph.operators if op.type == "RESHAPE"]
    assert reshapes[0].options == {"new_shape": (2, 72)}  # 6 x 3 x 4 after pooling
    pads = graph.tensors[[op for op in graph.operators if op.type == "PAD"][0].inputs[1]]
    np.testing.assert_array_equal(pads.data, [[0, 0], [1, 2], [0, 1]])


def test_multi_input_multi_output_model_runs(tflm_invoke):
    b = ModelBuilder(seed=4)
    a = b.input((1, 3, 3, 2), scale=0.1, zero_point=0)
    c = b.input((1, 1, 1, 2), scale=0.05, zero_point=-3)
    b.output(b.mul(a, c))
    b.output(b.logistic(a))
    model = b.build()
    graph = load_tflite(model)
    assert len(graph.inputs) == 2 and len(graph.outputs) == 2
    outs = tflm_invoke(model, _random_inputs(graph), n_outputs=2)
    assert [o.shape for o in outs] == [(1, 3, 3, 2), (1, 3, 3, 2)]
