"""The frontend reads odd but valid files as TensorFlow Lite Micro does.

Each test builds the file with the model builder, runs it in tflite-micro
and holds tvmdevice to the same answer: the same outputs, bit for bit, when
TFLM runs the file; a refusal naming the reason when TFLM refuses it; a
refusal when TFLM's result is undefined behaviour.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
import tflite

import tvmdevice
from tvmdevice import ops
from tvmdevice.aot.builder import ModelBuilder, single_op_model
from tvmdevice.aot.frontend import ModelFormatError, load_tflite
from tvmdevice.aot.frontend.tflite import MAX_TENSOR_BYTES_ENV, MAX_TOTAL_TENSOR_BYTES
from tvmdevice.errors import InvalidArgumentError, PlacementError, Refusal
from tvmdevice.quantization import quantize_multiplier

runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")

OPS = tflite.BuiltinOperator


def tflm(model: bytes, inputs: list[np.ndarray], n_outputs: int = 1) -> list[np.ndarray] | None:
    """TFLM's outputs, or None when its AllocateTensors (parse + prepare) refuses the model."""
    try:
        interp = runtime.Interpreter.from_bytes(model, arena_size=max(1 << 20, 16 * len(model)))
    except RuntimeError:
        return None
    for k, x in enumerate(inputs):
        interp.set_input(x, k)
    interp.invoke()
    return [interp.get_output(k) for k in range(n_outputs)]


def ours(model: bytes, inputs: list[np.ndarray], target: str = "c") -> list[np.ndarray]:
    with tvmdevice.compile(model, target).executor() as ex:
        return ex.run(inputs)


def random_inputs(model: bytes, seed: int = 0) -> list[np.ndarray]:
    graph = load_tflite(model)
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, size=graph.tensors[t].shape).astype(np.int8) for t in graph.inputs]


def assert_runs_as_tflm(model: bytes, n_outputs: int = 1) -> None:
    inputs = random_inputs(model)
    expected = tflm(model, inputs, n_outputs)
    assert expected is not None, "tflite-micro refused the model"
    got = ours(model, inputs)
    assert len(got) == n_outputs
    for k in range(n_outputs):
        np.testing.assert_array_equal(got[k].reshape(expected[k].shape), expected[k])


# -- operator codes ------------------------------------------------------------------

@pytest.mark.parametrize("deprecated, builtin, runs_as", [
    (OPS.AVERAGE_POOL_2D, OPS.MAX_POOL_2D, "MAX_POOL_2D"),  # builtin_code is larger: the package hid it
    (OPS.MAX_POOL_2D, OPS.AVERAGE_POOL_2D, "MAX_POOL_2D"),  # deprecated_builtin_code is larger
])
def test_operator_code_fields_that_disagree_run_the_larger_as_tflm_does(deprecated, builtin, runs_as):
    b = ModelBuilder(seed=1)
    b.output(b.avg_pool2d(b.input((1, 6, 6, 3), scale=0.05), pool=2))
    b.spec.operators[0].code = builtin
    b.spec.operators[0].deprecated_code = deprecated
    model = b.build()
    code = tflite.Model.GetRootAs(model, 0).OperatorCodes(0)
    assert code.DeprecatedBuiltinCode() == deprecated
    assert load_tflite(model).operators[0].type == runs_as
    assert_runs_as_tflm(model)


# -- buffers ---------------------------------------------------------------------------

def test_buffer_with_offset_and_inline_data_uses_the_inline_data():
    b = ModelBuilder(seed=3)
    b.output(b.fully_connected(b.input((1, 16), scale=0.05), 8))
    weights = b.spec.tensors[b.spec.operators[0].inputs[1]]
    data = b.spec.buffers[weights.buffer]
    # offset 8, size of the weights: the flatbuffer's header bytes, not the weights.
    b.spec.buffer_offset_fields[weights.buffer] = (8, len(data))
    model = b.build()
    buf = tflite.Model.GetRootAs(model, 0).Buffers(weights.buffer)
    assert buf.Offset() == 8 and buf.Size() == len(data) and buf.DataLength() == len(data)
    graph = load_tflite(model)
    np.testing.assert_array_equal(graph.tensors[1].data.reshape(-1), np.frombuffer(data, np.int8))
    assert_runs_as_tflm(model)


# -- bias quantization ---------------------------------------------------------------

def _dense(kind: str, per_channel: bool = False, seed: int = 1) -> ModelBuilder:
    b = ModelBuilder(seed=seed)
    if kind == "FULLY_CONNECTED":
        b.output(b.fully_connected(b.input((1, 8), scale=0.05), 4, per_channel=per_channel))
    elif kind == "CONV_2D":
        b.output(b.conv2d(b.input((1, 4, 4, 2), scale=0.05), 3, per_channel=per_channel))
    else:
        b.output(b.depthwise_conv2d(b.input((1, 4, 4, 2), scale=0.05), per_channel=per_channel))
    return b


@pytest.mark.parametrize("kind", ["CONV_2D", "FULLY_CONNECTED"])
@pytest.mark.parametrize("value", [99, 23, -1])
def test_unknown_quantized_bias_type_is_refused_as_tflm_refuses_it(kind, value):
    b = _dense(kind)
    b.spec.operators[0].options[1]["QuantizedBiasType"] = value
    model = b.build()
    assert tflm(model, random_inputs(_dense(kind).build())) is None
    with pytest.raises(ModelFormatError, match=rf"operator 0 \({kind}\): quantized_bias_type {value} "):
        load_tflite(model)


@pytest.mark.parametrize("kind", ["CONV_2D", "FULLY_CONNECTED"])
@pytest.mark.parametrize("value", [tflite.TensorType.INT32, tflite.TensorType.INT64, 22])
def test_known_quantized_bias_type_is_ignored_for_int8_as_tflm_does(kind, value):
    b = _dense(kind)
    b.spec.operators[0].options[1]["QuantizedBiasType"] = value
    assert_runs_as_tflm(b.build())


def _scale_bias(b: ModelBuilder, factor: float) -> None:
    bias = b.spec.tensors[b.spec.operators[0].inputs[2]]
    bias.scales = [s * factor for s in bias.scales]


def test_fully_connected_bias_scale_off_by_more_than_2_percent_of_output_scale_is_refused():
    # input 0.05 x weights 0.5/127 against the estimated output scale: x10 strays
    # by 2.5% of the output scale, x5 by 1.1%.
    b = _dense("FULLY_CONNECTED")
    _scale_bias(b, 10.0)
    model = b.build()
    assert tflm(model, random_inputs(model)) is None
    graph = load_tflite(model)
    with pytest.raises(Refusal, match=r"bias scale .* differs from input\*weights scale .* 2% of the output"):
        ops.analyze(graph, graph.operators[0])
    with pytest.raises(PlacementError, match="bias scale"):
        tvmdevice.compile(model, "c")
    within = _dense("FULLY_CONNECTED")
    _scale_bias(within, 5.0)
    assert_runs_as_tflm(within.build())


@pytest.mark.parametrize("ratio, refused", [(0.021, True), (0.019, False)])
def test_fully_connected_unquantized_bias_counts_as_scale_zero(ratio, refused):
    b = _dense("FULLY_CONNECTED")
    t = b.spec.tensors
    product = float(np.float32(t[0].scales[0]) * np.float32(t[1].scales[0]))
    t[3].scales = [product / ratio]
    t[b.spec.operators[0].inputs[2]].scales = None
    model = b.build()
    if refused:
        assert tflm(model, random_inputs(model)) is None
        graph = load_tflite(model)
        with pytest.raises(Refusal, match=r"bias tensor 2 is not quantized"):
            ops.analyze(graph, graph.operators[0])
    else:
        assert_runs_as_tflm(model)


@pytest.mark.parametrize("kind, per_channel", [("CONV_2D", False), ("CONV_2D", True),
                                               ("DEPTHWISE_CONV_2D", False), ("DEPTHWISE_CONV_2D", True),
                                               ("FULLY_CONNECTED", True)])
@pytest.mark.parametrize("bias", ["x50", "unquantized"])
def test_bias_quantization_tflm_does_not_check_runs(kind, per_channel, bias):
    # int8 convolutions and per-channel dense layers skip the bias check in TFLM's prepare.
    b = _dense(kind, per_channel)
    if bias == "x50":
        _scale_bias(b, 50.0)
    else:
        b.spec.tensors[b.spec.operators[0].inputs[2]].scales = None
    assert_runs_as_tflm(b.build())


# -- rescale shifts above 30 -------------------------------------------------------------

def _srdhm(a: int, b: int) -> int:
    if a == b == -(2**31):
        return 2**31 - 1
    ab = a * b
    v = ab + ((1 << 30) if ab >= 0 else 1 - (1 << 30))
    return v // 2**31 if v >= 0 else -((-v) // 2**31)


def _wrap(v: int) -> int:
    return ((v + 2**31) & 0xFFFFFFFF) - 2**31


def test_rescale_with_a_shift_above_30_is_undefined_in_tflm_and_refused():
    model = single_op_model("QUANTIZE", (1, 256), input_dtype="int8", scale=1e-30)
    graph = load_tflite(model)
    multiplier, shift = quantize_multiplier(float(graph.tensors[0].quant.scale[0]) /
                                            float(graph.tensors[1].quant.scale[0]))
    assert shift > 31
    x = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    (got,) = tflm(model, [x])
    # TFLM computes x * (1 << shift) in int32: undefined in C.  This build's
    # answer is what x86 does with it (shift count masked to 5 bits, the product
    # wrapped); a Cortex-M register shift by >= 32 gives 0, hence the zero point.
    x86 = [max(-128, min(127, _srdhm(_wrap(int(v) << (shift & 31)), multiplier))) for v in x.reshape(-1)]
    np.testing.assert_array_equal(got.reshape(-1), x86)
    assert not np.array_equal(got.reshape(-1), np.clip(x.reshape(-1).astype(np.int64) << 40, -128, 127))
    with pytest.raises(Refusal, match=rf"shift {shift}: outside .* \[-31, 30\] .*undefined behaviour"):
        ops.analyze(graph, graph.operators[0])
    with pytest.raises(PlacementError, match=rf"shift {shift}"):
        tvmdevice.compile(model, "c")


@pytest.mark.parametrize("op_type", ["CONV_2D", "DEPTHWISE_CONV_2D", "MUL", "MEAN"])
def test_every_rescaling_operator_refuses_a_shift_above_30(op_type):
    model = single_op_model(op_type, out_scale=1e-30)
    graph = load_tflite(model)
    with pytest.raises(Refusal, match=r"shift range \[-31, 30\]"):
        ops.analyze(graph, graph.operators[0])


# -- constant graph outputs -------------------------------------------------------------

def test_constant_graph_output_is_returned_as_tflm_returns_it():
    b = ModelBuilder(seed=4)
    x = b.input((1, 4, 4, 2), scale=0.05)
    b.output(b.avg_pool2d(x, pool=2))
    const = b.output(b.constant(np.arange(-6, 6, dtype=np.int8).reshape(2, 6), scale=0.1))
    model = b.build()
    graph = load_tflite(model)
    assert graph.tensors[const.index].is_constant and graph.outputs[1] == const.index
    assert_runs_as_tflm(model, n_outputs=2)
    module = tvmdevice.compile(model, "c")
    assert (const.index, "host") in module.schedule.constants
    with module.executor() as ex:
        first = ex.run(random_inputs(model))[1]
        first[...] = 0  # a copy: the next run still returns the model's data
        np.testing.assert_array_equal(ex.run(random_inputs(model, 1))[1], graph.tensors[const.index].data)


# -- the memory a model may ask for ------------------------------------------------------

def _declared_add(elements: int) -> bytes:
    # A 424-byte file: two [1, n] activations, no data behind either.
    b = ModelBuilder(seed=0)
    x = b.input((1, 8), scale=0.05)
    y = b.add(x, x, out_scale=0.1)
    b.output(y)
    for t in (x.index, y.index):
        b.spec.tensors[t].shape = (1, elements)
    return b.build()


def test_huge_declared_shapes_are_refused_at_load_unless_the_limit_is_raised(monkeypatch):
    monkeypatch.delenv(MAX_TENSOR_BYTES_ENV, raising=False)
    model = _declared_add(10_000_000)  # made the c target allocate 1.1 GB
    assert len(model) < 1024
    with pytest.raises(ModelFormatError, match=rf"20000000 bytes in total, over the {MAX_TOTAL_TENSOR_BYTES}-byte "
                                               rf"limit .*tensor 0 .*max_tensor_bytes= or \${MAX_TENSOR_BYTES_ENV}"):
        load_tflite(model)
    with pytest.raises(ModelFormatError, match="over the"):
        tvmdevice.compile(model, "c")
    assert load_tflite(model, max_tensor_bytes=20_000_000).tensors[0].shape == (1, 10_000_000)
    with pytest.raises(ModelFormatError, match="over the 1000-byte limit"):
        load_tflite(_declared_add(600), max_tensor_bytes=1000)
    monkeypatch.setenv(MAX_TENSOR_BYTES_ENV, "20000000")
    assert load_tflite(model).tensors[0].shape == (1, 10_000_000)
    monkeypatch.setenv(MAX_TENSOR_BYTES_ENV, "1000")
    with pytest.raises(ModelFormatError, match="over the 1000-byte limit"):
        tvmdevice.compile(_declared_add(600), "c")
    assert tvmdevice.compile(_declared_add(600), "c", max_tensor_bytes=2000).graph.tensors[0].shape == (1, 600)


@pytest.mark.parametrize("value", ["lots", "0", "-5"])
def test_a_bad_limit_is_an_argument_error(monkeypatch, value):
    monkeypatch.setenv(MAX_TENSOR_BYTES_ENV, value)
    with pytest.raises(InvalidArgumentError, match=MAX_TENSOR_BYTES_ENV):
        load_tflite(_declared_add(8))
    monkeypatch.delenv(MAX_TENSOR_BYTES_ENV)
    with pytest.raises(InvalidArgumentError, match="max_tensor_bytes"):
        load_tflite(_declared_add(8), max_tensor_bytes=0)


# -- offsets are checked, not caught ---------------------------------------------------

def test_an_offset_outside_the_file_names_the_table_it_belongs_to():
    model = single_op_model("FULLY_CONNECTED")
    sub = tflite.Model.GetRootAs(model, 0).Subgraphs(0)
    word = sub._tab.Vector(sub._tab.Offset(4)) + 4  # SubGraph.tensors[1]: the offset to tensor 1
    # Past the end of the file; past 2**32 (flatbuffers' own check raised TypeError there).
    for bad in (len(model), 0xFFFFFFF0):
        corrupt = bytearray(model)
        corrupt[word:word + 4] = struct.pack("<I", bad)
        with pytest.raises(ModelFormatError, match=r"malformed TFLite flatbuffer: subgraph 0: table at byte \d+ "
                                                   r"\(4 bytes\) lies outside the \d+-byte file"):
            load_tflite(bytes(corrupt))


def test_a_vtable_before_the_start_of_the_file_is_not_read_from_its_end():
    # A table's signed offset to its vtable may point before byte 0, where
    # Python indexing would silently read from the end of the file.
    model = single_op_model("FULLY_CONNECTED")
    sub = tflite.Model.GetRootAs(model, 0).Subgraphs(0)
    tensor = sub.Tensors(1)._tab.Pos
    corrupt = bytearray(model)
    corrupt[tensor:tensor + 4] = struct.pack("<i", tensor + 64)
    with pytest.raises(ModelFormatError, match=r"tensor 1: vtable at byte -64 \(4 bytes\) lies outside"):
        load_tflite(bytes(corrupt))
