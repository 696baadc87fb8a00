"""The operator layer's op data: TFLM's Prepare, computed once for every device.

Each op data is checked against the definitions TFLM's Prepare uses (output
size and leading padding, ``-zero point`` offsets, multipliers that rebuild
the real rescale factor, the activation clamp); the host tests then run the
reference kernels on exactly this op data and compare every tensor with TFLM.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tvmdevice import ops
from tvmdevice.aot.builder import ModelBuilder, single_op_model
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.errors import Refusal
from tvmdevice.quantization import activation_range
from tvmdevice.windows import leading_padding, out_size

EXAMPLES = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
scales = st.floats(min_value=math.log(2e-3), max_value=math.log(0.5)).map(math.exp)
zero_points = st.integers(-128, 127)
activations = st.sampled_from(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
paddings = st.sampled_from(["SAME", "VALID"])


def analyzed(model: bytes, index: int = 0):
    graph = load_tflite(model)
    op = graph.operators[index]
    return graph, op, ops.analyze(graph, op)


def quant(graph, index: int) -> tuple[float, int]:
    q = graph.tensors[index].quant
    return float(np.float32(q.scale[0])), int(q.zero_point[0])


def assert_rebuilds(multiplier, shift, real) -> None:
    """``multiplier * 2**(shift - 31)`` is ``real`` to Q31 precision (TFLM's QuantizeMultiplier)."""
    for m, s, r in zip(np.atleast_1d(multiplier), np.atleast_1d(shift), np.atleast_1d(real)):
        assert 2**30 <= int(m) < 2**31
        assert abs(int(m) * 2.0 ** (int(s) - 31) - r) <= r * 2.0**-31


def assert_readonly_int32(*arrays: np.ndarray) -> None:
    for a in arrays:
        assert a.dtype == np.int32 and not a.flags.writeable


# -- CONV_2D, DEPTHWISE_CONV_2D ------------------------------------------------

@EXAMPLES
@given(depthwise=st.booleans(), h=st.integers(3, 9), w=st.integers(3, 9), c=st.integers(1, 4),
       k=st.integers(1, 3), s=st.integers(1, 3), d=st.integers(1, 2), padding=paddings, act=activations,
       per_channel=st.booleans(), bias=st.booleans(), in_scale=scales, in_zp=zero_points, out_zp=zero_points)
def test_conv_op_data(depthwise, h, w, c, k, s, d, padding, act, per_channel, bias, in_scale, in_zp, out_zp):
    if padding == "VALID" and min(h, w) < (k - 1) * d + 1:
        return
    extra = {"depth_multiplier": 2} if depthwise else {"filters": 5}
    model = single_op_model("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", (1, h, w, c), in_scale, in_zp,
                            kernel=(k, k), stride=(s, s), dilation=(d, d), padding=padding, activation=act,
                            per_channel=per_channel, bias=bias, out_zero_point=out_zp, **extra)
    graph, op, data = analyzed(model)
    assert isinstance(data, ops.ConvData) and data.depthwise == depthwise and not data.is_view
    filt = graph.tensors[op.inputs[1]]
    out_ch = 2 * c if depthwise else 5
    oh = out_size(padding, h, k, s, d)
    assert (data.batches, data.in_h, data.in_w, data.in_ch) == (1, h, w, c)
    assert (data.out_h, data.out_w, data.out_ch) == (oh, out_size(padding, w, k, s, d), out_ch)
    assert graph.tensors[op.outputs[0]].shape == (1, data.out_h, data.out_w, data.out_ch)
    assert (data.filter_h, data.filter_w, data.stride_h, data.dilation_w) == (k, k, s, d)
    assert data.pad_h == leading_padding(s, d, h, k, oh)
    assert (data.groups, data.depth_multiplier) == ((1, 2) if depthwise else (1, 1))
    assert data.filter_in_ch == (1 if depthwise else c)
    assert data.num_inputs == len(op.inputs) and data.has_bias == bias
    in_s, in_z = quant(graph, op.inputs[0])
    out_s, out_z = quant(graph, op.outputs[0])
    assert (data.input_offset, data.output_offset) == (-in_z, out_z)
    assert (data.act_min, data.act_max) == activation_range(act, out_s, out_z)
    f_scales = np.asarray(filt.quant.scale, np.float32).astype(np.float64)
    f_scales = f_scales if f_scales.size == out_ch else np.repeat(f_scales, out_ch)
    assert_readonly_int32(data.multiplier, data.shift)
    assert data.multiplier.shape == (out_ch,)
    assert_rebuilds(data.multiplier, data.shift, in_s * f_scales / out_s)
    taps = k * k * (1 if depthwise else c)
    assert data.macs == oh * data.out_w * out_ch * taps


def test_grouped_conv_op_data():
    graph, op, data = analyzed(single_op_model("CONV_2D", (1, 5, 6, 6), filters=4, kernel=(3, 2), groups=2))
    assert (data.groups, data.filter_in_ch, data.in_ch, data.out_ch) == (2, 3, 6, 4)


def test_conv_without_bias_slot():
    b = ModelBuilder(seed=1)
    x = b.input((1, 4, 4, 2))
    b.output(b.conv2d(x, filters=3, bias=False))
    graph, op, data = analyzed(b.build())
    assert data.num_inputs == len(op.inputs) and not data.has_bias


def test_op_data_is_frozen():
    _, _, data = analyzed(single_op_model("CONV_2D"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.out_h = 3  # type: ignore[misc]
    with pytest.raises(ValueError):
        data.multiplier[0] = 1


# -- FULLY_CONNECTED ---------------------------------------------------------

@EXAMPLES
@given(batches=st.integers(1, 3), depth=st.integers(1, 40), units=st.integers(1, 12), act=activations,
       per_channel=st.booleans(), bias=st.booleans(), in_scale=scales, in_zp=zero_points, out_zp=zero_points)
def test_fully_connected_op_data(batches, depth, units, act, per_channel, bias, in_scale, in_zp, out_zp):
    model = single_op_model("FULLY_CONNECTED", (batches, depth), in_scale, in_zp, units=units, activation=act,
                            per_channel=per_channel, bias=bias, out_zero_point=out_zp)
    graph, op, data = analyzed(model)
    assert isinstance(data, ops.FullyConnectedData)
    assert (data.batches, data.accum_depth, data.out_ch) == (batches, depth, units)
    assert data.macs == batches * depth * units and data.has_bias == bias
    w = graph.tensors[op.inputs[1]].quant
    in_s, in_z = quant(graph, op.inputs[0])
    out_s, out_z = quant(graph, op.outputs[0])
    assert (data.input_offset, data.output_offset) == (-in_z, out_z)
    assert (data.act_min, data.act_max) == activation_range(act, out_s, out_z)
    assert_readonly_int32(data.multiplier, data.shift)
    assert data.per_channel == (w.scale.size > 1)
    if data.per_channel:
        assert data.filter_offset == 0
        real = in_s * np.asarray(w.scale, np.float32).astype(np.float64) / out_s
    else:
        assert data.filter_offset == -int(w.zero_point[0])
        # The scale product in double, as tflite-micro rounds (tests/ops/test_fc_multiplier.py).
        real = np.full(units, in_s * float(np.float32(w.scale[0])) / out_s)
    assert_rebuilds(data.multiplier, data.shift, real)


# -- pooling, softmax ----------------------------------------------------------

@EXAMPLES
@given(average=st.booleans(), h=st.integers(2, 9), w=st.integers(2, 9), k=st.integers(1, 3),
       s=st.integers(1, 3), padding=paddings, act=activations, in_scale=scales, in_zp=zero_points)
def test_pool_op_data(average, h, w, k, s, padding, act, in_scale, in_zp):
    if padding == "VALID" and min(h, w) < k:
        return
    op_type = "AVERAGE_POOL_2D" if average else "MAX_POOL_2D"
    model = single_op_model(op_type, (2, h, w, 3), in_scale, in_zp, pool=(k, k), stride=(s, s), padding=padding,
                            activation=act)
    graph, op, data = analyzed(model)
    assert isinstance(data, ops.PoolData) and data.average == average
    oh, ow = out_size(padding, h, k, s), out_size(padding, w, k, s)
    assert (data.batches, data.in_h, data.in_w, data.channels, data.out_h, data.out_w) == (2, h, w, 3, oh, ow)
    assert (data.pad_h, data.pad_w) == (leading_padding(s, 1, h, k, oh), leading_padding(s, 1, w, k, ow))
    out_s, out_z = quant(graph, op.outputs[0])
    assert (data.act_min, data.act_max) == activation_range(act, out_s, out_z)


@pytest.mark.parametrize("in_scale, beta, multiplier, left_shift", [
    # PreprocessSoftmaxScaling: beta * scale * 2**26, as a Q31 multiplier >= 1.
    (0.1, 1.0, 1717986944, 23), (1 / 16, 1.0, 1 << 30, 23), (0.05, 0.5, 1717986944, 21)])
def test_softmax_op_data(in_scale, beta, multiplier, left_shift):
    graph, op, data = analyzed(single_op_model("SOFTMAX", (3, 10), in_scale, 4, beta=beta))
    real = float(np.float32(beta)) * float(np.float32(in_scale)) * 2**26
    assert_rebuilds(data.input_multiplier, data.input_left_shift, real)
    assert (data.rows, data.depth) == (3, 10)
    assert data.input_left_shift == left_shift
    assert abs(data.input_multiplier - multiplier) <= 64
    # CalculateInputRadius(5, left_shift): floor(31 * 2**26 / 2**left_shift).
    assert data.diff_min == -math.floor(31 * 2**26 / 2**data.input_left_shift)


# -- ADD, MUL ------------------------------------------------------------------

@EXAMPLES
@given(s1=scales, s2=scales, z1=zero_points, z2=zero_points, act=activations)
def test_add_op_data(s1, s2, z1, z2, act):
    model = single_op_model("ADD", (1, 3, 4), s1, z1, input2_scale=s2, input2_zero_point=z2, activation=act)
    graph, op, data = analyzed(model)
    assert isinstance(data, ops.ElementwiseData)
    f1, f2 = quant(graph, op.inputs[0])[0], quant(graph, op.inputs[1])[0]
    so, zo = quant(graph, op.outputs[0])
    twice_max = 2 * max(f1, f2)
    assert (data.input1_offset, data.input2_offset, data.output_offset) == (-z1, -z2, zo)
    assert data.left_shift == 20
    assert_rebuilds(data.input1_multiplier, data.input1_shift, f1 / twice_max)
    assert_rebuilds(data.input2_multiplier, data.input2_shift, f2 / twice_max)
    assert_rebuilds(data.output_multiplier, data.output_shift, twice_max / (2**20 * so))
    assert (data.act_min, data.act_max) == activation_range(act, so, zo)
    assert data.out_shape == (1, 3, 4) and data.size == 12 and not data.broadcasts


def test_mul_op_data():
    graph, op, data = analyzed(single_op_model("MUL", (2, 1, 3), 0.05, 3, input2_shape=(1, 4, 1),
                                               input2_scale=0.02, input2_zero_point=-7))
    so, zo = quant(graph, op.outputs[0])
    assert (data.input1_offset, data.input2_offset, data.output_offset) == (-3, 7, zo)
    assert (data.left_shift, data.input1_multiplier, data.input2_shift) == (0, 0, 0)
    real = float(np.float32(0.05)) * float(np.float32(0.02)) / so
    assert_rebuilds(data.output_multiplier, data.output_shift, real)
    assert data.out_shape == (2, 4, 3) and data.size == 24 and data.broadcasts


def test_broadcast_strides_right_align_and_zero_broadcast_dims():
    _, _, data = analyzed(single_op_model("MUL", (2, 1, 3), input2_shape=(4, 1)))
    out, s1, s2 = data.broadcast_strides(4)
    assert out == (1, 2, 4, 3)
    assert s1 == (6, 3, 0, 1)  # [2, 1, 3]: rows of 3, broadcast along the 4 (a size-1 output dim keeps its step)
    assert s2 == (4, 0, 1, 0)  # [4, 1]: one value per row, broadcast along the 2 and the channels
    with pytest.raises(Refusal, match="3 dimensions"):
        data.broadcast_strides(2)


# -- the other operators -----------------------------------------------------------

def test_every_operator_the_ir_knows_has_a_definition():
    from tvmdevice.aot.builder.presets import SINGLE_OP_DEFAULT_SHAPES
    from tvmdevice.aot.placement import VIEW_TYPES

    assert set(ops.OPERATORS) == set(SINGLE_OP_DEFAULT_SHAPES)
    for op_type in ops.OPERATORS:
        graph, op, data = analyzed(single_op_model(op_type), -1)
        assert data.op_type == op_type and data.op_index == op.index
        definition = ops.OPERATORS[op_type]
        assert set(op.options) <= set(definition.signature.options), op_type
        assert data.is_view == (op_type in VIEW_TYPES)


def test_reshape_is_a_view():
    graph, op, data = analyzed(single_op_model("RESHAPE", (1, 4, 4, 3), shape=(1, 48)))
    assert isinstance(data, ops.ViewData) and data.is_view
    assert (data.in_shape, data.out_shape, data.size) == ((1, 4, 4, 3), (1, 48), 48)


def test_pad_op_data():
    pads = [[0, 0], [1, 2], [0, 3], [0, 0]]
    graph, op, data = analyzed(single_op_model("PAD", (1, 3, 4, 2), 0.05, -9, paddings=pads))
    assert data.paddings == ((0, 0), (1, 2), (0, 3), (0, 0))
    assert data.out_shape == (1, 6, 7, 2) and data.pad_value == quant(graph, op.outputs[0])[1] == -9


def test_concatenation_op_data():
    model = single_op_model("CONCATENATION", (1, 2, 3, 2), input_shapes=[(1, 2, 3, 2), (1, 2, 1, 2)], axis=-2)
    _, _, data = analyzed(model)
    assert (data.axis, data.inputs_count, data.outer_size, data.copy_sizes) == (2, 2, 2, (6, 2))


def test_mean_folds_the_count_into_the_multiplier():
    graph, op, data = analyzed(single_op_model("MEAN", (1, 4, 5, 3), 0.05, 3))
    assert (data.axes, data.count) == ((1, 2), 20)
    s_in, z_in = quant(graph, op.inputs[0])
    s_out, z_out = quant(graph, op.outputs[0])
    assert (data.input_offset, data.output_offset) == (-z_in, z_out)
    # multiplier * 2**(shift - 31) ~= s_in / s_out / count, to the precision TFLM keeps.
    assert abs(data.multiplier * 2.0 ** (data.shift - 31) - s_in / s_out / 20) <= s_in / s_out / 20 * 2**-26


def test_quantize_and_dequantize_op_data():
    graph, op, data = analyzed(single_op_model("QUANTIZE", (1, 8), scale=0.07, zero_point=-5))
    assert isinstance(data, ops.QuantizeData) and data.from_float
    assert (data.output_scale, data.output_offset) == (float(np.float32(0.07)), -5)
    graph, op, data = analyzed(single_op_model("QUANTIZE", (1, 8), 0.02, 4, input_dtype="int8", scale=0.07,
                                               zero_point=-5))
    assert not data.from_float and data.input_offset == -4
    assert_rebuilds(data.multiplier, data.shift, float(np.float32(0.02)) / float(np.float32(0.07)))
    graph, op, data = analyzed(single_op_model("DEQUANTIZE", (1, 8), 0.02, 4))
    assert isinstance(data, ops.DequantizeData)
    assert (data.scale, data.zero_point, data.size) == (float(np.float32(0.02)), 4, 8)


@pytest.mark.parametrize("op_type", ["LOGISTIC", "TANH"])
def test_logistic_tanh_op_data(op_type):
    graph, op, data = analyzed(single_op_model(op_type, (1, 8), 0.1, 7))
    assert isinstance(data, ops.ActivationData) and data.input_zero_point == 7
    # frexp(0.1 * 2**27): Q31 mantissa and exponent; radius = floor(15 * 2**27 / 2**left_shift).
    mantissa, exponent = math.frexp(float(np.float32(0.1)) * 2**27)
    assert data.input_left_shift == exponent
    assert abs(data.input_multiplier - mantissa * 2**31) <= 0.5
    assert data.input_range_radius == math.floor(15 * 2**27 / 2**exponent)
