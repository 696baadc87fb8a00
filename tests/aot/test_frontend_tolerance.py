"""The importer tolerates what tflite-micro tolerates.

Each rule is written where the frontend checks it; each test builds a model
that tflite-micro accepts and runs, and holds tvmdevice to the same outputs.
"""

from __future__ import annotations

import numpy as np
import pytest
import tflite

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.aot.frontend import ModelFormatError, load_tflite
from tvmdevice.ir import ABSENT
from tvmdevice.testing.oracle import tflm_run

pytest.importorskip("tflite_micro.python.tflite_micro.runtime")

OPS = tflite.BuiltinOperator


def assert_runs_as_tflm(model: bytes, dtype: str = "int8") -> None:
    graph = load_tflite(model)
    rng = np.random.default_rng(0)
    info = np.iinfo(dtype)
    inputs = [rng.integers(info.min, info.max + 1, size=graph.tensors[t].shape).astype(dtype) for t in graph.inputs]
    ref = tflm_run(model, inputs)
    with tvmdevice.compile(model, "c").executor() as ex:
        got = ex.run(inputs)
    assert got
    for k, out in enumerate(got):
        np.testing.assert_array_equal(out, ref.output(k).reshape(out.shape))


# -- per-channel quantization on a 1-D bias: TFLM ignores the quantized dimension ----------

@pytest.mark.parametrize("kind, axis", [("conv2d", 3), ("conv2d", 1), ("depthwise_conv2d", 0),
                                        ("fully_connected", 2)])
def test_bias_per_channel_scales_on_an_out_of_range_axis_load_as_tflm_reads_them(kind, axis):
    # TFLM's person detection model: 8 bias scales declared on axis 3 of a [8] bias.
    b = ModelBuilder(seed=4)
    x = b.input((1, 6, 6, 8) if kind != "fully_connected" else (2, 8), 0.05, 1)
    if kind == "fully_connected":
        y = b.fully_connected(x, 8, per_channel=True)
    else:
        y = getattr(b, kind)(x, **({"filters": 8} if kind == "conv2d" else {}))
    b.output(y)
    bias = b.spec.tensors[b.spec.operators[0].inputs[2]]
    assert bias.scales is not None and len(bias.scales) == 8 and len(bias.shape) == 1
    bias.quantized_dimension = axis
    model = b.build()
    assert load_tflite(model).tensors[bias_index(b)].quant.axis == 0
    assert_runs_as_tflm(model)


def bias_index(b: ModelBuilder) -> int:
    return b.spec.operators[0].inputs[2]


def test_a_filter_with_scales_on_the_wrong_axis_is_still_refused():
    # The rule is for 1-D tensors only: a 4-D filter's axis decides which scales go where.
    b = ModelBuilder(seed=4)
    b.output(b.conv2d(b.input((1, 6, 6, 3), 0.05), filters=4))
    b.spec.tensors[b.spec.operators[0].inputs[1]].quantized_dimension = 3
    with pytest.raises(ModelFormatError, match="per-channel scales on axis 3"):
        load_tflite(b.build())


# -- deprecated builtin codes ------------------------------------------------------------

@pytest.mark.parametrize("build", ["transpose", "gather", "pad"])
def test_models_written_with_only_the_deprecated_code_field_run(build):
    # Pre-2.3 converters wrote only the int8 deprecated_builtin_code; TFLM reads the larger field.
    b = ModelBuilder(seed=2)
    x = b.input((1, 4, 5, 3), 0.05, 2)
    y = {"transpose": lambda: b.transpose(x, [0, 2, 1, 3]), "gather": lambda: b.gather(x, [1, 0], axis=1),
         "pad": lambda: b.pad(x, [[0, 0], [1, 1], [0, 2], [0, 0]])}[build]()
    b.output(y)
    b.spec.legacy_opcodes = True
    model = b.build()
    code = tflite.Model.GetRootAs(model, 0).OperatorCodes(0)
    assert code.BuiltinCode() == code.DeprecatedBuiltinCode()  # the reader falls back to the old field
    assert_runs_as_tflm(model)


def test_a_code_above_127_is_read_past_the_placeholder_of_the_deprecated_field():
    # BROADCAST_TO is 130: deprecated_builtin_code holds PLACEHOLDER_FOR_GREATER_OP_CODES (127).
    b = ModelBuilder(seed=2)
    b.output(b.broadcast_to(b.input((1, 3), 0.05, 2), (4, 3)))
    model = b.build()
    code = tflite.Model.GetRootAs(model, 0).OperatorCodes(0)
    assert code.DeprecatedBuiltinCode() == OPS.PLACEHOLDER_FOR_GREATER_OP_CODES
    assert load_tflite(model).operators[0].type == "BROADCAST_TO"
    assert_runs_as_tflm(model)


# -- optional inputs given as -1 -----------------------------------------------------------

def _drop_input(b: ModelBuilder, k: int) -> None:
    op = b.spec.operators[0]
    op.inputs = op.inputs[:k] + (ABSENT,) + op.inputs[k + 1:]


# DEPTHWISE_CONV_2D is left out: tflite-micro crashes on its absent bias.
@pytest.mark.parametrize("kind", ["conv2d", "fully_connected"])
def test_an_absent_bias_given_as_minus_one_runs(kind):
    b = ModelBuilder(seed=5)
    x = b.input((1, 5, 5, 4) if kind != "fully_connected" else (1, 12), 0.05, -3)
    y = {"conv2d": lambda: b.conv2d(x, filters=3), "depthwise_conv2d": lambda: b.depthwise_conv2d(x),
         "fully_connected": lambda: b.fully_connected(x, 5)}[kind]()
    b.output(y)
    _drop_input(b, 2)
    assert_runs_as_tflm(b.build())


def test_padv2_without_constant_values_given_as_minus_one_pads_with_the_zero_point():
    b = ModelBuilder(seed=5)
    b.output(b.padv2(b.input((1, 3, 3, 2), 0.05, -7), [[0, 0], [1, 1], [2, 0], [0, 1]], value=5))
    _drop_input(b, 2)
    model = b.build()
    graph = load_tflite(model)
    assert graph.operators[0].inputs[2] == ABSENT
    assert_runs_as_tflm(model)


def test_reshape_with_its_shape_operand_given_as_minus_one_runs():
    b = ModelBuilder(seed=5)
    b.output(b.reshape(b.input((1, 2, 3, 4), 0.05), (1, 24)))
    op = b.spec.operators[0]
    op.inputs = (op.inputs[0], ABSENT)
    assert_runs_as_tflm(b.build())


# -- constant tensors with empty buffers ----------------------------------------------------

def test_a_zero_element_constant_with_an_empty_buffer_is_a_constant():
    # RESHAPE to a scalar: its shape operand has shape [0], and an empty buffer is all it can hold.
    b = ModelBuilder(seed=6)
    x = b.input((1, 1), 0.05, 4)
    y = b.reshape(x, ())
    b.output(y)
    shape_tensor = b.spec.tensors[b.spec.operators[0].inputs[1]]
    assert shape_tensor.shape == (0,) and b.spec.buffers[shape_tensor.buffer] == b""
    model = b.build()
    graph = load_tflite(model)
    assert graph.tensors[b.spec.operators[0].inputs[1]].is_constant
    assert_runs_as_tflm(model)


def test_an_empty_buffer_on_a_tensor_with_elements_is_not_a_constant():
    # Only zero-element tensors are constants without data: an empty buffer on a [2] shape operand
    # leaves a tensor nothing writes, which TFLM would read uninitialised.
    b = ModelBuilder(seed=6)
    b.output(b.transpose(b.input((2, 3), 0.05), [1, 0]))
    b.spec.buffers[b.spec.tensors[b.spec.operators[0].inputs[1]].buffer] = b""
    with pytest.raises(Exception, match="constant|before any operator writes it"):
        load_tflite(b.build())


# -- options TFLM ignores ------------------------------------------------------------------

@pytest.mark.parametrize("field", ["EllipsisMask", "NewAxisMask", "Offset"])
def test_strided_slice_options_tflm_never_reads_are_ignored(field):
    # TFLM's BuildStridedSliceParams zeroes ellipsis_mask and new_axis_mask and never sets offset.
    b = ModelBuilder(seed=7)
    b.output(b.strided_slice(b.input((1, 4, 5, 3), 0.05, 1), [0, 1, 0, 0], [1, 4, 5, 3], [1, 2, 2, 1]))
    b.spec.operators[0].options[1][field] = True if field == "Offset" else 2
    model = b.build()
    assert load_tflite(model).operators[0].options[{"EllipsisMask": "ellipsis_mask", "NewAxisMask": "new_axis_mask",
                                                     "Offset": "offset"}[field]]
    assert_runs_as_tflm(model)
