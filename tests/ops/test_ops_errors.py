"""The layer's two verdicts: a malformed operator (ModelFormatError, named) and
parameters no TFLM int8 kernel supports (Refusal, with its reason and operator)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from tvmdevice import ops
from tvmdevice.aot.builder import single_op_model
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.errors import InvalidArgumentError, ModelFormatError, NotSupportedError, Refusal
from tvmdevice.ir import Operator, Quantization


def graph_of(op_type: str, **params):
    return load_tflite(single_op_model(op_type, **params))


def requant(tensor, scale=None, zero_point=None) -> None:
    q = tensor.quant
    tensor.quant = Quantization(np.array([q.scale[0] if scale is None else scale], np.float32),
                                np.array([q.zero_point[0] if zero_point is None else zero_point]), 0)


# -- Refusal -------------------------------------------------------------------

def test_refusal_carries_reason_operator_and_device():
    op = Operator(index=3, type="CONV_2D", inputs=(), outputs=())
    r = Refusal("filter zero point is not 0", op=op)
    assert isinstance(r, NotSupportedError)
    assert (r.reason, r.op_index, r.op_type, r.device) == ("filter zero point is not 0", 3, "CONV_2D", None)
    assert str(r) == "operator #3 CONV_2D: filter zero point is not 0"
    placed = r.with_context(device="cmsis-nn")
    assert str(placed) == "operator #3 CONV_2D on 'cmsis-nn': filter zero point is not 0"
    assert r.device is None  # a copy
    assert str(Refusal("too big")) == "too big"
    assert str(Refusal("too big").with_context(op=op)) == "operator #3 CONV_2D: too big"
    again = pickle.loads(pickle.dumps(placed))
    assert str(again) == str(placed) and again.reason == placed.reason


def test_errors_are_importable_from_both_places():
    from tvmdevice import errors
    from tvmdevice.aot.frontend import errors as frontend_errors

    assert frontend_errors.ModelFormatError is errors.ModelFormatError
    assert frontend_errors.UnsupportedOperatorError is errors.UnsupportedOperatorError
    # A malformed operator is an invalid argument to whoever reads the model.
    assert issubclass(ModelFormatError, InvalidArgumentError)


@pytest.mark.parametrize("op_type, mutate, reason", [
    ("CONV_2D", lambda g, op: setattr(g.tensors[op.inputs[0]], "dtype", np.dtype(np.float32)), "int8"),
    ("CONV_2D", lambda g, op: op.options.update(fused_activation="TANH"), "fused activation 'TANH'"),
    ("CONV_2D", lambda g, op: op.options.update(padding="REFLECT"), "padding 'REFLECT'"),
    ("CONV_2D", lambda g, op: requant(g.tensors[op.outputs[0]], scale=1e-20), "rescale factor"),
    ("FULLY_CONNECTED", lambda g, op: setattr(g.tensors[op.inputs[0]], "quant", None), "not quantized"),
    ("SOFTMAX", lambda g, op: requant(g.tensors[op.outputs[0]], scale=0.01), "1/256"),
    ("ADD", lambda g, op: requant(g.tensors[op.outputs[0]], scale=1e-9), "must be in \\(0, 1\\)"),
])
def test_unsupported_parameters_are_refused_with_the_operator(op_type, mutate, reason):
    graph = graph_of(op_type)
    op = graph.operators[0]
    mutate(graph, op)
    ops.validate(graph, op)  # structure is fine: the model loads
    with pytest.raises(Refusal, match=reason) as err:
        ops.analyze(graph, op)
    assert (err.value.op_index, err.value.op_type) == (0, op_type)
    assert str(err.value).startswith(f"operator #0 {op_type}: ")


def test_per_channel_fully_connected_with_a_kept_3d_output_is_refused():
    graph = load_tflite(single_op_model("FULLY_CONNECTED", (2, 3, 5), units=4, keep_num_dims=True))
    weights = graph.tensors[graph.operators[0].inputs[1]]
    weights.quant = Quantization(np.full(4, 0.01, np.float32), np.zeros(4, np.int64), 0)
    with pytest.raises(Refusal, match="2-D output"):
        ops.analyze(graph, graph.operators[0])


def test_broadcast_beyond_tflm_rank_is_refused():
    graph = graph_of("MUL", input_shape=(2, 1, 2, 1), input2_shape=(1, 2, 1, 2))
    assert ops.analyze(graph, graph.operators[0]) is not None
    for t in graph.tensors:  # one more dimension: beyond TFLM's 4-D broadcast for MUL
        t.shape = (1, *t.shape)
    with pytest.raises(Refusal, match="4 dimensions"):
        ops.analyze(graph, graph.operators[0])


# -- ModelFormatError --------------------------------------------------------------

@pytest.mark.parametrize("op_type, mutate, message", [
    ("CONV_2D", lambda g, op: op.options.pop("stride_w"), "stride_w"),
    ("CONV_2D", lambda g, op: op.options.update(stride_h=0), "stride_h = 0"),
    ("CONV_2D", lambda g, op: setattr(g.tensors[op.outputs[0]], "shape", (1, 8, 8, 5)), "output tensor"),
    ("CONV_2D", lambda g, op: setattr(g.tensors[op.inputs[0]], "shape", (1, 8, 8)), "must be 4-D"),
    ("DEPTHWISE_CONV_2D", lambda g, op: op.options.update(depth_multiplier=2), "depth_multiplier 2"),
    ("FULLY_CONNECTED", lambda g, op: setattr(g.tensors[op.inputs[0]], "shape", (1, 15)), "expected 1 batches"),
    ("MAX_POOL_2D", lambda g, op: op.options.update(filter_height=-1), "filter_height"),
    ("AVERAGE_POOL_2D", lambda g, op: setattr(g.tensors[op.outputs[0]], "shape", (1, 4, 4, 2)), "expected"),
    ("SOFTMAX", lambda g, op: setattr(g.tensors[op.outputs[0]], "shape", (1, 11)), "must match"),
    ("ADD", lambda g, op: setattr(g.tensors[op.inputs[1]], "shape", (1, 4, 3, 3)), "do not broadcast"),
    ("MUL", lambda g, op: setattr(op, "outputs", ()), "0 outputs"),
    ("ADD", lambda g, op: requant(g.tensors[op.inputs[0]], zero_point=200), "zero point 200"),
    ("CONV_2D", lambda g, op: requant(g.tensors[op.inputs[1]], scale=float("nan")), "non-finite scale"),
])
def test_malformed_operators_name_the_operator(op_type, mutate, message):
    graph = graph_of(op_type)
    op = graph.operators[0]
    mutate(graph, op)
    for check in (ops.validate, ops.analyze):
        with pytest.raises(ModelFormatError, match=rf"operator 0 \({op_type}\)") as err:
            check(graph, op)
        assert message in str(err.value)


def test_unknown_operator_types_pass_validation_and_have_no_op_data():
    graph = graph_of("ADD")
    op = graph.operators[0]
    other = Operator(index=5, type="EMBEDDING_LOOKUP", inputs=op.inputs, outputs=op.outputs)
    ops.validate(graph, other)
    assert ops.analyze(graph, other) is None


# -- pooling: TFLM's "same quantization" rule ---------------------------------------

@pytest.mark.parametrize("in_scale, out_scale, accepted", [
    (0.05, 0.05, True),
    (0.05, 0.05 + 0.9e-6, True),      # within TFLM's absolute 1e-6
    (0.05, 0.05 + 1.2e-6, False),
    # Absolute, not relative: large scales get no more room ...
    (10.0, 10.000005, False),          # a relative 1e-6 would accept this
    # ... and small scales no less.
    (1e-4, 1.0005e-4, True),           # a relative 1e-6 (or exact equality) would refuse this
])
@pytest.mark.parametrize("op_type", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_pooling_requires_tflm_same_quantization(op_type, in_scale, out_scale, accepted):
    graph = graph_of(op_type)
    op = graph.operators[0]
    requant(graph.tensors[op.inputs[0]], scale=in_scale)
    requant(graph.tensors[op.outputs[0]], scale=out_scale)
    if accepted:
        assert isinstance(ops.analyze(graph, op), ops.PoolData)
    else:
        with pytest.raises(Refusal, match="share scale and zero point"):
            ops.analyze(graph, op)


def test_pooling_refuses_different_zero_points():
    graph = graph_of("MAX_POOL_2D")
    op = graph.operators[0]
    requant(graph.tensors[op.outputs[0]], zero_point=5)
    with pytest.raises(Refusal, match="share scale and zero point"):
        ops.analyze(graph, op)


@pytest.mark.parametrize("op_type, mutate, reason", [
    ("RESHAPE", lambda g, op: requant(g.tensors[op.outputs[0]], scale=0.5), "share scale"),
    ("PAD", lambda g, op: requant(g.tensors[op.outputs[0]], zero_point=3), "share scale"),
    ("CONCATENATION", lambda g, op: op.options.update(fused_activation="RELU"), "fused activation"),
    ("LOGISTIC", lambda g, op: requant(g.tensors[op.outputs[0]], scale=0.5), "output scale 0.00390625"),
    ("TANH", lambda g, op: requant(g.tensors[op.outputs[0]], zero_point=-128), "zero point 0"),
    ("DEQUANTIZE", lambda g, op: setattr(g.tensors[op.inputs[0]], "quant", None), "not quantized"),
])
def test_other_operators_refuse_unsupported_parameters(op_type, mutate, reason):
    graph = graph_of(op_type)
    op = graph.operators[-1]
    mutate(graph, op)
    ops.validate(graph, op)
    with pytest.raises(Refusal, match=reason):
        ops.analyze(graph, op)


@pytest.mark.parametrize("op_type, mutate, message", [
    ("RESHAPE", lambda g, op: setattr(g.tensors[op.outputs[0]], "shape", (1, 47)), "cannot reshape"),
    ("PAD", lambda g, op: setattr(g.tensors[op.inputs[1]], "data", None), "must be a constant"),
    ("CONCATENATION", lambda g, op: op.options.update(axis=7), "axis 7 is out of range"),
    ("MEAN", lambda g, op: setattr(g.tensors[op.outputs[0]], "shape", (1, 2, 3)), "output tensor"),
    ("QUANTIZE", lambda g, op: setattr(g.tensors[op.outputs[0]], "shape", (1, 3)), "must match"),
    ("TANH", lambda g, op: setattr(op, "inputs", ()), "0 inputs"),
])
def test_other_malformed_operators_name_the_operator(op_type, mutate, message):
    graph = graph_of(op_type)
    op = graph.operators[-1]
    mutate(graph, op)
    with pytest.raises(ModelFormatError, match=rf"operator {op.index} \({op_type}\): .*{message}"):
        ops.validate(graph, op)


def test_tensors_too_large_for_int32_indexing_are_refused():
    graph = graph_of("ADD")
    op = graph.operators[0]
    for i in (*op.inputs, *op.outputs):
        graph.tensors[i].shape = (1, 1 << 16, 1 << 16)  # 4 Gi elements: only a hand-built graph gets here
    with pytest.raises(Refusal, match="int32"):
        ops.analyze(graph, op)


def test_signatures_describe_the_operands():
    conv = ops.OPERATORS["CONV_2D"].signature
    assert [r.name for r in conv.inputs] == ["input", "filter", "bias"]
    assert conv.required_inputs == 2 and conv.inputs[1].constant and conv.inputs[2].optional
    concat = ops.OPERATORS["CONCATENATION"].signature
    assert concat.variadic and concat.required_inputs == 1 and len(concat.roles(3)) == 3
    assert np.dtype(np.float32) in ops.OPERATORS["QUANTIZE"].signature.inputs[0].dtypes
