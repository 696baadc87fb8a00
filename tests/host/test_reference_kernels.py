"""Host reference kernels: bit-exact with TensorFlow Lite Micro.

Every test builds a real TFLite model, runs it in TFLM (reference kernels,
every tensor preserved) and in :func:`tvmdevice.testing.reference.run_graph` on the
same seeded inputs, and compares every operator output.  Nothing is compared
against stored numbers.
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tvmdevice import ops
from tvmdevice.aot.builder import ModelBuilder, demo_model, single_op_model
from tvmdevice.aot.frontend import ModelFormatError, load_tflite
from tvmdevice.errors import KernelError, Refusal
from tvmdevice.ir import Graph, Operator, Quantization
from tvmdevice.testing import reference as kernels
from tvmdevice.testing.reference import _fixedpoint as fp

EXAMPLES = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scales = st.floats(min_value=math.log(2e-3), max_value=math.log(0.5)).map(math.exp)
zero_points = st.integers(-128, 127)
activations = st.sampled_from(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
paddings = st.sampled_from(["SAME", "VALID"])
seeds = st.integers(0, 2**16)


def assert_bit_exact(compare, model: bytes, seed: int) -> None:
    mismatches, n_tensors, _ = compare(model, seed)
    assert n_tensors > 0
    assert not mismatches, f"differs from TFLM: {mismatches}"


def _valid(size: int, k: int, stride: int, dilation: int, padding: str) -> bool:
    return padding == "SAME" or size >= (k - 1) * dilation + 1


# -- convolutions -----------------------------------------------------------

@EXAMPLES
@given(n=st.integers(1, 2), h=st.integers(1, 9), w=st.integers(1, 9), c=st.integers(1, 4),
       filters=st.integers(1, 5), kh=st.integers(1, 3), kw=st.integers(1, 3), sh=st.integers(1, 3),
       sw=st.integers(1, 3), dh=st.integers(1, 2), dw=st.integers(1, 2), padding=paddings, act=activations,
       per_channel=st.booleans(), bias=st.booleans(), in_scale=scales, in_zp=zero_points,
       out_scale=st.one_of(st.none(), scales), out_zp=zero_points, seed=seeds)
def test_conv2d(compare_with_tflm, n, h, w, c, filters, kh, kw, sh, sw, dh, dw, padding, act, per_channel,
                bias, in_scale, in_zp, out_scale, out_zp, seed):
    assume(_valid(h, kh, sh, dh, padding) and _valid(w, kw, sw, dw, padding))
    model = single_op_model("CONV_2D", (n, h, w, c), in_scale, in_zp, seed=seed, filters=filters,
                            kernel=(kh, kw), stride=(sh, sw), dilation=(dh, dw), padding=padding, activation=act,
                            per_channel=per_channel, bias=bias, out_scale=out_scale, out_zero_point=out_zp)
    assert_bit_exact(compare_with_tflm, model, seed)


@settings(max_examples=8, deadline=None)
@given(groups=st.integers(2, 3), cg=st.integers(1, 3), per_group=st.integers(1, 2), padding=paddings, seed=seeds)
def test_grouped_conv2d(compare_with_tflm, groups, cg, per_group, padding, seed):
    model = single_op_model("CONV_2D", (1, 5, 6, groups * cg), 0.02, -3, seed=seed, filters=groups * per_group,
                            kernel=(3, 2), padding=padding, groups=groups)
    assert_bit_exact(compare_with_tflm, model, seed)


@EXAMPLES
@given(n=st.integers(1, 2), h=st.integers(1, 9), w=st.integers(1, 9), c=st.integers(1, 4),
       mult=st.integers(1, 3), kh=st.integers(1, 4), kw=st.integers(1, 4), sh=st.integers(1, 3),
       sw=st.integers(1, 3), dh=st.integers(1, 2), dw=st.integers(1, 2), padding=paddings, act=activations,
       per_channel=st.booleans(), bias=st.booleans(), in_scale=scales, in_zp=zero_points,
       out_zp=zero_points, seed=seeds)
def test_depthwise_conv2d(compare_with_tflm, n, h, w, c, mult, kh, kw, sh, sw, dh, dw, padding, act,
                          per_channel, bias, in_scale, in_zp, out_zp, seed):
    assume(_valid(h, kh, sh, dh, padding) and _valid(w, kw, sw, dw, padding))
    model = single_op_model("DEPTHWISE_CONV_2D", (n, h, w, c), in_scale, in_zp, seed=seed, kernel=(kh, kw),
                            depth_multiplier=mult, stride=(sh, sw), dilation=(dh, dw), padding=padding,
                            activation=act, per_channel=per_channel, bias=bias, out_zero_point=out_zp)
    assert_bit_exact(compare_with_tflm, model, seed)


@EXAMPLES
@given(batch=st.lists(st.integers(1, 3), min_size=1, max_size=2), depth=st.integers(1, 40),
       units=st.integers(1, 12), act=activations, per_channel=st.booleans(), bias=st.booleans(),
       keep=st.booleans(), in_scale=scales, in_zp=zero_points, out_scale=st.one_of(st.none(), scales),
       out_zp=zero_points, seed=seeds)
def test_fully_connected(compare_with_tflm, batch, depth, units, act, per_channel, bias, keep, in_scale, in_zp,
                         out_scale, out_zp, seed):
    shape = tuple(batch) + (depth,)
    model = single_op_model("FULLY_CONNECTED", shape, in_scale, in_zp, seed=seed, units=units, activation=act,
                            per_channel=per_channel, bias=bias, keep_num_dims=keep, out_scale=out_scale,
                            out_zero_point=out_zp)
    if per_channel and units > 1 and keep and len(shape) > 2:
        # TFLM's per-channel kernel would take dimension 0 as the batch count.
        graph = load_tflite(model)  # well formed: it loads, and the host refuses it
        with pytest.raises(Refusal, match=r"operator #0 FULLY_CONNECTED: per-channel weights need a 2-D output"):
            kernels.prepare(graph, graph.operators[0])
        return
    assert_bit_exact(compare_with_tflm, model, seed)


# -- pooling, softmax --------------------------------------------------------

@EXAMPLES
@given(op=st.sampled_from(["AVERAGE_POOL_2D", "MAX_POOL_2D"]), n=st.integers(1, 2), h=st.integers(1, 9),
       w=st.integers(1, 9), c=st.integers(1, 4), ph=st.integers(1, 4), pw=st.integers(1, 4),
       sh=st.integers(1, 3), sw=st.integers(1, 3), padding=paddings, act=activations, in_scale=scales,
       in_zp=zero_points, seed=seeds)
def test_pooling(compare_with_tflm, op, n, h, w, c, ph, pw, sh, sw, padding, act, in_scale, in_zp, seed):
    assume(_valid(h, ph, sh, 1, padding) and _valid(w, pw, sw, 1, padding))
    model = single_op_model(op, (n, h, w, c), in_scale, in_zp, seed=seed, pool=(ph, pw), stride=(sh, sw),
                            padding=padding, activation=act)
    assert_bit_exact(compare_with_tflm, model, seed)


@EXAMPLES
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=4), beta=st.sampled_from([1.0, 0.5, 2.0, 0.13]),
       in_scale=st.floats(min_value=math.log(1e-3), max_value=math.log(2.0)).map(math.exp),
       in_zp=zero_points, seed=seeds)
def test_softmax(compare_with_tflm, shape, beta, in_scale, in_zp, seed):
    model = single_op_model("SOFTMAX", tuple(shape), in_scale, in_zp, seed=seed, beta=beta)
    assert_bit_exact(compare_with_tflm, model, seed)


def test_softmax_many_classes(compare_with_tflm):
    model = single_op_model("SOFTMAX", (2, 1000), 0.1, 7)
    assert_bit_exact(compare_with_tflm, model, 0)


def test_softmax_sum_overflow_is_an_error_not_garbage():
    # 600 equal logits: TFLM's exponent check fails and it aborts; the
    # reference raises instead of returning values TFLM never produces.
    graph = load_tflite(single_op_model("SOFTMAX", (1, 600), 0.1, 0))
    with pytest.raises(KernelError, match=r"operator 0 \(SOFTMAX\)"):
        kernels.run_graph(graph, [np.zeros((1, 600), np.int8)])


# -- element-wise ------------------------------------------------------------

@st.composite
def broadcast_shapes(draw):
    out = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))

    def operand():
        dims = [d if draw(st.booleans()) else 1 for d in out]
        return tuple(dims[draw(st.integers(0, len(dims) - 1)):])

    return operand(), operand()


@EXAMPLES
@given(op=st.sampled_from(["ADD", "MUL"]), shapes=broadcast_shapes(), act=activations, s1=scales, s2=scales,
       z1=zero_points, z2=zero_points, out_scale=st.one_of(st.none(), scales), out_zp=zero_points, seed=seeds)
def test_add_mul_broadcast(compare_with_tflm, op, shapes, act, s1, s2, z1, z2, out_scale, out_zp, seed):
    model = single_op_model(op, shapes[0], s1, z1, seed=seed, input2_shape=shapes[1], input2_scale=s2,
                            input2_zero_point=z2, activation=act, out_scale=out_scale, out_zero_point=out_zp)
    assert_bit_exact(compare_with_tflm, model, seed)


@EXAMPLES
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=4), kind=st.sampled_from(["LOGISTIC", "TANH"]),
       in_scale=st.floats(min_value=math.log(1e-3), max_value=math.log(1.0)).map(math.exp), in_zp=zero_points,
       seed=seeds)
def test_logistic_tanh(compare_with_tflm, shape, kind, in_scale, in_zp, seed):
    model = single_op_model(kind, tuple(shape), in_scale, in_zp, seed=seed)
    assert_bit_exact(compare_with_tflm, model, seed)


@EXAMPLES
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=4), from_float=st.booleans(), in_scale=scales,
       in_zp=zero_points, out_scale=scales, out_zp=zero_points, seed=seeds)
def test_quantize(compare_with_tflm, shape, from_float, in_scale, in_zp, out_scale, out_zp, seed):
    model = single_op_model("QUANTIZE", tuple(shape), in_scale, in_zp, seed=seed,
                            input_dtype="float32" if from_float else "int8", scale=out_scale, zero_point=out_zp)
    assert_bit_exact(compare_with_tflm, model, seed)


@EXAMPLES
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=4), in_scale=scales, in_zp=zero_points, seed=seeds)
def test_dequantize(compare_with_tflm, shape, in_scale, in_zp, seed):
    model = single_op_model("DEQUANTIZE", tuple(shape), in_scale, in_zp, seed=seed)
    assert_bit_exact(compare_with_tflm, model, seed)


# -- shape operators -----------------------------------------------------------

@EXAMPLES
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data(), seed=seeds)
def test_reshape(compare_with_tflm, shape, data, seed):
    total = int(np.prod(shape))
    divisors = [d for d in range(1, total + 1) if total % d == 0]
    first = data.draw(st.sampled_from(divisors))
    model = single_op_model("RESHAPE", tuple(shape), 0.03, 5, seed=seed, shape=(first, -1),
                            shape_tensor=data.draw(st.booleans()), new_shape_option=data.draw(st.booleans()))
    assert_bit_exact(compare_with_tflm, model, seed)


@EXAMPLES
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data(), in_zp=zero_points, seed=seeds)
def test_pad(compare_with_tflm, shape, data, in_zp, seed):
    pads = [[data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))] for _ in shape]
    model = single_op_model("PAD", tuple(shape), 0.03, in_zp, seed=seed, paddings=pads)
    assert_bit_exact(compare_with_tflm, model, seed)


def test_pad_with_int64_paddings_matches_numpy():
    # TFLM reads PAD paddings as int32 (and fails to prepare int64 ones); the
    # reference accepts both, so it is checked against numpy here.
    pads = [[0, 1], [2, 0], [1, 1]]
    model = single_op_model("PAD", (2, 3, 4), 0.1, -9, paddings=pads, paddings_dtype="int64")
    graph = load_tflite(model)
    assert graph.tensors[graph.operators[0].inputs[1]].dtype == np.int64
    x = np.random.default_rng(0).integers(-128, 128, (2, 3, 4)).astype(np.int8)
    out = kernels.run_graph(graph, [x])[graph.outputs[0]]
    np.testing.assert_array_equal(out, np.pad(x, pads, constant_values=-9))


@EXAMPLES
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data(), seed=seeds)
def test_concatenation(compare_with_tflm, shape, data, seed):
    rank = len(shape)
    axis = data.draw(st.integers(-rank, rank - 1))
    sizes = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=4))
    shapes = []
    for s in sizes:
        one = list(shape)
        one[axis] = s
        shapes.append(tuple(one))
    model = single_op_model("CONCATENATION", tuple(shape), 0.03, -7, seed=seed, input_shapes=shapes, axis=axis)
    assert_bit_exact(compare_with_tflm, model, seed)


@EXAMPLES
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4), data=st.data(), keep=st.booleans(),
       in_scale=scales, in_zp=zero_points, requant=st.booleans(), out_scale=scales, out_zp=zero_points,
       seed=seeds)
def test_mean(compare_with_tflm, shape, data, keep, in_scale, in_zp, requant, out_scale, out_zp, seed):
    rank = len(shape)
    axes = data.draw(st.lists(st.integers(-rank, rank - 1), min_size=1, max_size=2))
    assume(len({a % rank for a in axes}) <= 2)
    params = dict(axes=axes, keep_dims=keep)
    if requant:
        params.update(out_scale=out_scale, out_zero_point=out_zp)
    model = single_op_model("MEAN", tuple(shape), in_scale, in_zp, seed=seed, **params)
    assert_bit_exact(compare_with_tflm, model, seed)


@pytest.mark.parametrize("requant", [False, True])
def test_mean_spatial_axes(compare_with_tflm, requant):
    # 4-D, keep_dims, axes [1, 2]: older TFLM releases had a fast path here
    # that rounds differently; the current one does not.
    params = dict(out_scale=0.07, out_zero_point=3) if requant else {}
    for seed in range(3):
        model = single_op_model("MEAN", (2, 5, 3, 4), 0.05, -20, seed=seed, axes=[1, 2], keep_dims=True, **params)
        assert_bit_exact(compare_with_tflm, model, seed)


# -- whole models ----------------------------------------------------------------

def test_demo_model_bit_exact(compare_with_tflm):
    for seed in range(3):
        assert_bit_exact(compare_with_tflm, demo_model(), seed)


def _real_models() -> list[str]:
    d = os.environ.get("TVMDEVICE_MODELS_DIR")
    return sorted(p.name for p in Path(d).glob("*.tflite")) if d and Path(d).is_dir() else []


@pytest.mark.parametrize("name", _real_models() or ["(TVMDEVICE_MODELS_DIR unset)"])
def test_real_model_every_tensor_bit_exact(models_dir, compare_with_tflm, name):
    model = (models_dir / name).read_bytes()
    for seed in range(3):
        mismatches, n_tensors, n_values = compare_with_tflm(model, seed)
        assert n_tensors == len(load_tflite(model).operators)
        assert not mismatches, f"{name} seed {seed}: {mismatches}"


# -- API ------------------------------------------------------------------------------

def test_supported_set():
    assert kernels.SUPPORTED == {
        "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D", "MAX_POOL_2D", "SOFTMAX", "ADD",
        "MUL", "RESHAPE", "QUANTIZE", "DEQUANTIZE", "PAD", "CONCATENATION", "MEAN", "LOGISTIC", "TANH",
        # SUB and the int16x8 variants, by kernel key
        "SUB", "ADD:int16", "SUB:int16", "MUL:int16", "QUANTIZE:float32->int16", "QUANTIZE:int8->int16",
        "QUANTIZE:int16->int8", "QUANTIZE:int16->int16", "QUANTIZE:int16->int32", "CONV_2D:int16",
        "DEPTHWISE_CONV_2D:int16",
        "FULLY_CONNECTED:int16", "AVERAGE_POOL_2D:int16", "MAX_POOL_2D:int16", "SOFTMAX:int8->int16", "SOFTMAX:int16",
        "LOGISTIC:int16", "TANH:int16",
        # shape and data movement
        "TRANSPOSE", "SLICE", "STRIDED_SLICE", "BROADCAST_TO", "SPLIT", "SPLIT_V", "UNPACK", "PACK", "SQUEEZE",
        "EXPAND_DIMS", "GATHER", "PADV2", "RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR",
        # arithmetic and activations
        "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "PRELU", "RELU", "RELU6", "LEAKY_RELU", "RELU_N1_TO_1",
        "HARD_SWISH", "SUM", "REDUCE_MAX", "ARG_MAX", "ARG_MIN", "TRANSPOSE_CONV", "BATCH_MATMUL",
        "LOG_SOFTMAX",
        # recurrent
        "UNIDIRECTIONAL_SEQUENCE_LSTM", "SVDF"}


def test_prepare_refuses_unknown_operator_by_name():
    graph = load_tflite(single_op_model("ADD"))
    op = graph.operators[0]
    bogus = Operator(index=7, type="EMBEDDING_LOOKUP", inputs=op.inputs, outputs=op.outputs, options={})
    with pytest.raises(Refusal, match=r"operator #7 EMBEDDING_LOOKUP on 'c': no host reference kernel for "
                                      r"EMBEDDING_LOOKUP"):
        kernels.prepare(graph, bogus)


def test_prepare_refuses_bad_softmax_output_quantization():
    graph = load_tflite(single_op_model("SOFTMAX"))
    out = graph.tensors[graph.operators[0].outputs[0]]
    out.quant = Quantization(np.array([0.01], np.float32), np.array([-128]))
    with pytest.raises(Refusal, match=r"operator #0 SOFTMAX: .*1/256"):
        kernels.prepare(graph, graph.operators[0])


def test_supported_set_is_the_plugins_declared_operators():
    # The plugin declares its operators without importing the kernels (cheap
    # discovery); both must name the same set.
    from tvmdevice.host import plugin

    assert plugin.OPERATORS == kernels.SUPPORTED
    assert {key.split(":")[0] for key in kernels.SUPPORTED} <= set(ops.OPERATORS)


def test_prepare_uses_the_given_op_data():
    graph = load_tflite(demo_model())
    for op in graph.operators:
        data = ops.analyze(graph, op)
        call = kernels.prepare(graph, op, data)
        params = getattr(call.params, "data", call.params)  # pooling adds its tap counts
        if not hasattr(call.params, "table"):  # lookup tables are the host's own packing
            assert params is data
    conv = graph.operators[0]
    shifted = dataclasses.replace(ops.analyze(graph, conv), output_offset=5)
    assert kernels.prepare(graph, conv, shifted).params.output_offset == 5


def test_host_plugin_prepares_with_or_without_op_data():
    import tvmdevice

    graph = load_tflite(single_op_model("ADD"))
    op = graph.operators[0]
    registry = tvmdevice.get_registry()
    c = registry.device_type("c")
    data = ops.analyze(graph, op)
    # The device fills its C params struct from the op data it is given (a
    # value only the given op data has shows it), or analyzes the operator.
    given = dataclasses.replace(data, output_offset=5)
    assert registry.prepare_operator(c, c.default_options(), graph, op, given).params.values["output_offset"] == 5
    assert registry.prepare_operator(c, c.default_options(), graph, op, None).params.values["output_multiplier"] == \
        data.output_multiplier


def test_windows_too_large_for_the_reference_are_refused_by_the_host():
    graph = load_tflite(single_op_model("CONV_2D", (1, 64, 64, 8), dilation=(1000, 1000), padding="SAME"))
    with pytest.raises(Refusal, match=r"operator #0 CONV_2D on 'c': effective filter size"):
        kernels.prepare(graph, graph.operators[0])


def test_prepare_reports_missing_options_as_format_error():
    graph = load_tflite(single_op_model("CONV_2D"))
    graph.operators[0].options.pop("stride_h")
    with pytest.raises(ModelFormatError, match=r"operator 0 \(CONV_2D\)"):
        kernels.prepare(graph, graph.operators[0])


def test_kernel_writes_outputs_in_place_with_buffer_convention():
    graph: Graph = load_tflite(demo_model())
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, size=graph.tensors[graph.inputs[0]].shape).astype(np.int8)
    values = kernels.run_graph(graph, [x])
    conv = graph.operators[0]
    call = kernels.prepare(graph, conv)
    assert callable(call.kernel) and call.scratch_bytes == 0
    out = np.zeros_like(values[conv.outputs[0]])
    buffers = [None if i == -1 else values[i] for i in conv.inputs] + [out]
    call.kernel(call.params, buffers, None)
    np.testing.assert_array_equal(out, values[conv.outputs[0]])
    assert np.any(out != 0)


def test_run_graph_returns_every_tensor_and_checks_inputs():
    graph = load_tflite(demo_model())
    x = np.zeros(graph.tensors[graph.inputs[0]].shape, np.int8)
    values = kernels.run_graph(graph, [x])
    assert set(values) == {t.index for t in graph.tensors}
    with pytest.raises(ValueError, match="needs shape"):
        kernels.run_graph(graph, [np.zeros((1, 2), np.int8)])
    with pytest.raises(ValueError, match="inputs"):
        kernels.run_graph(graph, [])


def test_add_mul_with_constant_operand(compare_with_tflm):
    b = ModelBuilder(seed=9)
    x = b.input((1, 3, 4, 5), scale=0.03, zero_point=-4)
    k = b.constant(np.arange(-10, 10, 4, dtype=np.int8).reshape(1, 1, 1, 5), scale=0.02, zero_point=1)
    b.output(b.mul(b.add(x, k, activation="RELU6"), k))
    assert_bit_exact(compare_with_tflm, b.build(), 4)


def test_builder_model_with_two_inputs_and_float_boundary(compare_with_tflm):
    b = ModelBuilder(seed=5)
    x = b.input((1, 6), dtype="float32")
    q = b.quantize(x, 0.05, 3)
    y = b.input((1, 6), scale=0.04, zero_point=-2)
    s = b.add(q, y, activation="RELU")
    b.output(b.dequantize(b.tanh(s)))
    assert_bit_exact(compare_with_tflm, b.build(), 2)


# -- fixed-point primitives against their real-valued meaning ----------------------------

def test_fixedpoint_exp_reciprocal_logistic_tanh_are_accurate():
    a = np.linspace(-15.9, 0.0, 2001)
    raw5 = np.round(a * 2**26).astype(np.int64)  # Q5.26
    np.testing.assert_allclose(fp.exp_on_negative_values(raw5, 5) / 2**31, np.exp(raw5 / 2**26), atol=2e-7)
    x = np.linspace(0.0, 0.999, 500)
    raw0 = np.round(x * 2**31).astype(np.int64)
    np.testing.assert_allclose(fp.one_over_one_plus_x_for_x_in_0_1(raw0) / 2**31, 1 / (1 + raw0 / 2**31),
                               atol=2e-7)
    v = np.linspace(-7.9, 7.9, 801)
    raw4 = np.round(v * 2**27).astype(np.int64)  # Q4.27
    real = raw4 / 2**27
    np.testing.assert_allclose(fp.logistic(raw4, 4) / 2**31, 1 / (1 + np.exp(-real)), atol=2e-7)
    np.testing.assert_allclose(fp.tanh(raw4, 4) / 2**31, np.tanh(real), atol=4e-7)
    assert fp.srdhm(np.array([-(2**31)]), -(2**31))[0] == 2**31 - 1
