"""TFLite frontend: real models import into the IR faithfully, and broken or
unsupported files give errors that say which operator and what is wrong."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import tflite

import tvmdevice
from tvmdevice import ops
from tvmdevice.aot.builder import ModelBuilder, OperatorSpec, demo_model, serialize, single_op_model
from tvmdevice.aot.frontend import ModelFormatError, UnsupportedOperatorError, load_model, load_tflite
from tvmdevice.aot.frontend.tflite import MAX_TOTAL_TENSOR_BYTES
from tvmdevice.errors import ModelError, PlacementError, Refusal
from tvmdevice.ir import ABSENT, Graph

# From ../shared/models/README.md: operators and boundary shapes per model.
REAL_MODELS = {
    "hello_world_int8.tflite": ({"FULLY_CONNECTED": 3}, (1, 1), (1, 1)),
    "micro_speech_int8.tflite": (
        {"RESHAPE": 1, "DEPTHWISE_CONV_2D": 1, "FULLY_CONNECTED": 1, "SOFTMAX": 1}, (1, 1960), (1, 4)),
    "kws_dscnn_int8.tflite": (
        {"CONV_2D": 5, "DEPTHWISE_CONV_2D": 4, "AVERAGE_POOL_2D": 1, "RESHAPE": 1, "FULLY_CONNECTED": 1,
         "SOFTMAX": 1}, (1, 49, 10, 1), (1, 12)),
    "ad_fc_autoencoder_int8.tflite": ({"FULLY_CONNECTED": 10}, (1, 640), (1, 640)),
}


# -- real models ---------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(REAL_MODELS))
def test_real_model_imports(models_dir, name):
    path = models_dir / name
    if not path.exists():
        pytest.skip(f"{name} not in {models_dir}")
    graph = load_tflite(path)
    ops, in_shape, out_shape = REAL_MODELS[name]
    assert graph.name == path.stem
    assert Counter(op.type for op in graph.operators) == Counter(ops)
    assert [op.index for op in graph.operators] == list(range(len(graph.operators)))
    (inp,), (out,) = graph.inputs, graph.outputs
    assert graph.tensors[inp].shape == in_shape and graph.tensors[inp].dtype == np.int8
    assert graph.tensors[out].shape == out_shape and graph.tensors[out].dtype == np.int8
    for t in graph.tensors:
        assert t.index == graph.tensors.index(t)
        if t.data is not None:
            assert not t.data.flags.writeable
            assert t.data.shape == t.shape and t.data.dtype == t.dtype
            with pytest.raises(ValueError):
                t.data.reshape(-1)[0] = 0
        if t.quant is not None:
            assert t.quant.scale.dtype == np.float32 and t.quant.zero_point.dtype == np.int64
            assert not t.quant.scale.flags.writeable
    # The same file read as bytes gives the same graph contents.
    again = load_tflite(path.read_bytes(), name="again")
    assert again.name == "again"
    assert [(op.type, op.inputs, op.outputs, op.options) for op in again.operators] == \
           [(op.type, op.inputs, op.outputs, op.options) for op in graph.operators]


def test_micro_speech_details(models_dir):
    path = models_dir / "micro_speech_int8.tflite"
    if not path.exists():
        pytest.skip("micro_speech_int8.tflite missing")
    graph = load_model(path)
    dw = graph.operators[1]
    assert dw.type == "DEPTHWISE_CONV_2D"
    assert dw.options["depth_multiplier"] == 8 and dw.options["padding"] == "SAME"
    assert dw.options["stride_h"] == 2 and dw.options["stride_w"] == 2
    w = graph.tensors[dw.inputs[1]]
    assert w.shape == (1, 10, 8, 8) and w.quant.per_channel and w.quant.axis == 3 and w.quant.scale.size == 8
    bias = graph.tensors[dw.inputs[2]]
    assert bias.dtype == np.int32 and bias.data.shape == (8,)
    sm = graph.operators[3]
    assert sm.type == "SOFTMAX" and sm.options == {"beta": 1.0}
    out_q = graph.tensors[sm.outputs[0]].quant
    assert float(out_q.scale[0]) == 1 / 256 and int(out_q.zero_point[0]) == -128


# -- API -----------------------------------------------------------------------

def test_load_model_dispatches_on_suffix(tmp_path):
    model = demo_model()
    p = tmp_path / "demo.tflite"
    p.write_bytes(model)
    graph = load_model(p)
    assert isinstance(graph, Graph) and graph.name == "demo"
    with pytest.raises(UnsupportedOperatorError, match=r"\.onnx"):
        load_model(tmp_path / "x.onnx")
    with pytest.raises(ModelFormatError, match="cannot read"):
        load_model(tmp_path / "missing.tflite")


def test_bytes_input_names_and_bytearray():
    model = demo_model()
    assert load_tflite(model).name == "demo"  # the subgraph name
    assert load_tflite(bytearray(model), name="x").name == "x"
    assert load_tflite(memoryview(model)).name == "demo"


def test_errors_are_model_errors():
    assert issubclass(ModelFormatError, ModelError) and issubclass(UnsupportedOperatorError, ModelError)
    assert issubclass(ModelFormatError, ValueError)


def test_constants_do_not_alias_caller_buffer():
    raw = bytearray(single_op_model("FULLY_CONNECTED"))
    graph = load_tflite(raw)
    w = graph.tensors[graph.operators[0].inputs[1]]
    before = w.data.copy()
    raw[:] = bytes(len(raw))
    np.testing.assert_array_equal(w.data, before)


def test_legacy_operator_codes_use_deprecated_field():
    b = ModelBuilder(seed=1)
    x = b.input((1, 6, 6, 2))
    b.output(b.avg_pool2d(b.conv2d(x, filters=2), pool=2))
    b.spec.legacy_opcodes = True
    graph = load_tflite(b.build())
    assert [op.type for op in graph.operators] == ["CONV_2D", "AVERAGE_POOL_2D"]


def test_constant_data_stored_after_the_flatbuffer():
    # The layout TFLite uses for models over 2 GB: Buffer.offset/size.
    b = ModelBuilder(seed=2)
    x = b.input((1, 5, 5, 3), scale=0.05)
    b.output(b.fully_connected(b.reshape(b.conv2d(x, filters=4), (1, -1)), 6))
    inline = load_tflite(b.build())
    b.spec.external_buffers = True
    model = b.build()
    m = tflite.Model.GetRootAs(model, 0)
    assert any(m.Buffers(i).Offset() > 1 and m.Buffers(i).DataLength() == 0 for i in range(m.BuffersLength()))
    external = load_tflite(model)
    for t_in, t_ext in zip(inline.tensors, external.tensors):
        if t_in.data is None:
            assert t_ext.data is None
        else:
            np.testing.assert_array_equal(t_in.data, t_ext.data)
    # An offset past the end of the file is caught.
    with pytest.raises(ModelFormatError, match="past the end"):
        load_tflite(model[:-8])


def test_absent_optional_bias():
    graph = load_tflite(single_op_model("CONV_2D", bias=False))
    assert len(graph.operators[0].inputs) == 2
    b = ModelBuilder()
    x = b.input((1, 4, 4, 2))
    y = b.conv2d(x, filters=3)
    b.output(y)
    op = b.spec.operators[0]
    op.inputs = op.inputs[:2] + (ABSENT,)
    graph = load_tflite(b.build())
    assert graph.operators[0].inputs[2] == ABSENT and graph.op_inputs(graph.operators[0])[2] is None


# -- malformed files ----------------------------------------------------------------

def _conv_builder() -> tuple[ModelBuilder, int]:
    b = ModelBuilder(seed=0)
    x = b.input((1, 6, 6, 2), scale=0.05, zero_point=1)
    y = b.conv2d(x, filters=3)
    b.output(y)
    return b, y.index


@pytest.mark.parametrize("data, match", [
    (b"", "too short"),
    (b"TFL3", "too short"),
    (b"\x10\x00\x00\x00TFL2" + bytes(64), "identifier"),
    (b"\x10\x00\x00\x00JUNK" + bytes(64), "identifier"),
])
def test_not_a_tflite_file(data, match):
    with pytest.raises(ModelFormatError, match=match):
        load_tflite(data)


@pytest.mark.parametrize("cut", [9, 40, 0.5, 0.9, -1])
def test_truncated_file(cut):
    model = demo_model()
    n = int(len(model) * cut) if isinstance(cut, float) else cut % len(model)
    with pytest.raises(ModelFormatError):
        load_tflite(model[:n])


def test_wrong_schema_version():
    b, _ = _conv_builder()
    b.spec.version = 2
    with pytest.raises(ModelFormatError, match="schema version 2"):
        load_tflite(b.build())


def test_more_than_one_subgraph():
    b, _ = _conv_builder()
    b.spec.extra_subgraphs = 1
    with pytest.raises(UnsupportedOperatorError, match="2 subgraphs"):
        load_tflite(b.build())


def test_unsupported_builtin_operator_is_named():
    b, _ = _conv_builder()
    b.spec.operators.append(OperatorSpec(tflite.BuiltinOperator.EMBEDDING_LOOKUP, (1, 1), (1,)))
    with pytest.raises(UnsupportedOperatorError, match=r"operator 1 \(EMBEDDING_LOOKUP\) is not supported"):
        load_tflite(b.build())


def test_custom_operator_is_named():
    b, _ = _conv_builder()
    b.spec.operators.insert(0, OperatorSpec(tflite.BuiltinOperator.CUSTOM, (0,), (0,)))
    with pytest.raises(UnsupportedOperatorError, match=r"operator 0 is the custom operator"):
        load_tflite(b.build())


def test_unsupported_dtype_names_operator_and_operand():
    b = ModelBuilder()
    x = b.input((1, 4), scale=0.1)
    y = b.input((1, 4), scale=0.1)
    b.output(b.add(x, y))
    b.spec.tensors[y.index].type = tflite.TensorType.UINT8
    with pytest.raises(UnsupportedOperatorError, match=r"operator 0 \(ADD\) input 1 .* UINT8"):
        load_tflite(b.build())


def test_unsupported_fused_activation():
    b = ModelBuilder()
    x = b.input((1, 4), scale=0.1)
    b.output(b.add(x, x))
    b.spec.operators[0].options = ("AddOptions", {"FusedActivationFunction": tflite.ActivationFunctionType.TANH})
    with pytest.raises(UnsupportedOperatorError, match=r"operator 0 \(ADD\): fused activation TANH"):
        load_tflite(b.build())


def test_operator_tensor_index_out_of_range():
    b, _ = _conv_builder()
    op = b.spec.operators[0]
    op.inputs = (999,) + op.inputs[1:]
    with pytest.raises(ModelFormatError, match=r"operator 0 \(CONV_2D\) input 0 is tensor 999, out of range"):
        load_tflite(b.build())


def test_graph_output_index_out_of_range():
    b, _ = _conv_builder()
    b.spec.outputs = [12345]
    with pytest.raises(ModelFormatError, match="12345"):
        load_tflite(b.build())


def test_buffer_index_out_of_range():
    b, _ = _conv_builder()
    b.spec.tensors[1].buffer = 77
    with pytest.raises(ModelFormatError, match="buffer 77"):
        load_tflite(b.build())


def test_negative_dimension():
    b, out = _conv_builder()
    b.spec.tensors[out].shape = (1, -6, 6, 3)
    with pytest.raises(ModelFormatError, match="negative dimension"):
        load_tflite(b.build())


def test_huge_shape_is_refused_before_allocating():
    b, out = _conv_builder()
    b.spec.tensors[out].shape = (1 << 16, 1 << 16, 1 << 16, 3)
    with pytest.raises(ModelFormatError, match=str(MAX_TOTAL_TENSOR_BYTES)):
        load_tflite(b.build())


def test_constant_shape_larger_than_its_buffer():
    b, _ = _conv_builder()
    weights = b.spec.tensors[1]
    weights.shape = (3, 3, 3, 20)
    with pytest.raises(ModelFormatError, match="holds 54 bytes but shape"):
        load_tflite(b.build())


def test_per_channel_scales_must_match_the_axis():
    b, _ = _conv_builder()
    b.spec.tensors[1].scales = [0.01, 0.02]
    b.spec.tensors[1].zero_points = [0, 0]
    with pytest.raises(ModelFormatError, match="2 per-channel scales on axis 0"):
        load_tflite(b.build())


def test_non_positive_scale():
    b, _ = _conv_builder()
    b.spec.tensors[0].scales = [0.0]
    with pytest.raises(ModelFormatError, match="non-positive"):
        load_tflite(b.build())


def test_missing_required_options():
    b, _ = _conv_builder()
    b.spec.operators[0].options = None
    with pytest.raises(ModelFormatError, match=r"operator 0 \(CONV_2D\) has no builtin options"):
        load_tflite(b.build())


def test_wrong_arity():
    b, _ = _conv_builder()
    b.spec.operators[0].inputs = b.spec.operators[0].inputs[:1]
    with pytest.raises(ModelFormatError, match=r"operator 0 \(CONV_2D\) has 1 inputs"):
        load_tflite(b.build())


def test_weights_must_be_constant():
    b = ModelBuilder()
    x = b.input((1, 8), scale=0.1)
    b.output(b.fully_connected(x, 4))
    w = b.spec.operators[0].inputs[1]
    b.spec.tensors[w].buffer = 0
    b.spec.inputs.append(w)
    with pytest.raises(UnsupportedOperatorError, match=r"operator 0 \(FULLY_CONNECTED\) input 1 \(weights\) must"):
        load_tflite(b.build())


def test_tensor_read_before_written():
    b, out = _conv_builder()
    b.spec.inputs = []
    with pytest.raises(ModelFormatError, match="before any operator writes it"):
        load_tflite(b.build())


def test_inconsistent_output_shape_is_caught_by_kernel_validation():
    b, out = _conv_builder()
    b.spec.tensors[out].shape = (1, 5, 6, 3)
    with pytest.raises(ModelFormatError, match=r"operator 0 \(CONV_2D\): output tensor .* expected \[1, 6, 6, 3\]"):
        load_tflite(b.build())


def test_concatenation_with_mismatched_quantization_is_refused():
    # Well formed, so it loads; TFLM's int8 kernel does not rescale, so the
    # operator layer refuses it and compiling fails naming the operator.
    b = ModelBuilder()
    x = b.input((1, 4), scale=0.1)
    y = b.input((1, 4), scale=0.2)
    b.output(b.concatenation([x, y]))
    graph = load_tflite(b.build())
    with pytest.raises(Refusal, match=r"operator #0 CONCATENATION: .*share scale"):
        ops.analyze(graph, graph.operators[0])
    with pytest.raises(PlacementError, match=r"operator #0 CONCATENATION: .*share scale"):
        tvmdevice.compile(b.build(), "c")


def test_serialize_round_trips_a_spec_exactly():
    b, _ = _conv_builder()
    spec = b.spec
    assert serialize(spec) == b.build()


def test_loading_never_involves_a_device():
    # The frontend validates with the operator layer only: no device (not even
    # the host's reference kernels) is imported to load a model.
    import subprocess
    import sys

    code = ("import sys; from tvmdevice.aot.builder import demo_model; from tvmdevice.aot.frontend import load_tflite; "
            "load_tflite(demo_model()); "
            "print(sorted(m for m in sys.modules if m.startswith(('tvmdevice.host', 'tvmdevice.registry', "
            "'tvmdevice_'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
