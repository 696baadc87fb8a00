"""TFLite schema facts the frontend needs: operator codes, tensor types,
operator signatures and the decoding of builtin options into the IR's
option dictionaries (names as in :mod:`tvmdevice.ir`).

Only the generated readers of the ``tflite`` package touch the flatbuffer;
this module maps what they return to plain Python values.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable, Mapping

import numpy as np
import tflite
from flatbuffers import number_types as N

from tvmdevice.aot.frontend import _shape_options
from tvmdevice.aot.frontend._bounds import checked
from tvmdevice.errors import ModelFormatError, UnsupportedOperatorError
from tvmdevice.ops import OPERATORS, Signature

__all__ = [
    "builtin_code",
    "OPCODE_NAMES",
    "SUPPORTED_OPS",
    "TYPE_NAMES",
    "NUMPY_TYPES",
    "Signature",
    "SIGNATURES",
    "decode_options",
]

#: builtin operator code -> name, from the generated enum.
OPCODE_NAMES: dict[int, str] = {
    v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_") and isinstance(v, int)
}
CUSTOM_CODE = tflite.BuiltinOperator.CUSTOM
# OperatorCode.builtin_code: the int32 field in vtable slot 10 (field 3).
_BUILTIN_CODE_SLOT = 10


def builtin_code(oc: Any) -> int:
    """The builtin operator code of ``oc`` (a ``tflite.OperatorCode``), as TFLM reads it.

    TFLM's GetBuiltinCode (``schema_utils.cc``) takes the larger of
    ``builtin_code`` and ``deprecated_builtin_code``: schema v3 files leave
    the first at 0, codes above 127 leave the second at 127.  A file whose two
    fields disagree runs the larger, so this reader must too.  The generated
    ``OperatorCode.BuiltinCode()`` cannot be used: it answers the deprecated
    field for every ``builtin_code`` below 127, so the raw field is read here.
    """
    code = oc._tab.GetSlot(_BUILTIN_CODE_SLOT, 0, N.Int32Flags)
    return max(int(code), int(oc.DeprecatedBuiltinCode()))


#: tensor type code -> name, from the generated enum.
TYPE_NAMES: dict[int, str] = {
    v: k for k, v in vars(tflite.TensorType).items() if not k.startswith("_") and isinstance(v, int)
}

# Little-endian explicitly: TFLite buffers are little-endian whatever the host.
NUMPY_TYPES: dict[int, np.dtype] = {
    tflite.TensorType.FLOAT32: np.dtype("<f4"),
    tflite.TensorType.INT32: np.dtype("<i4"),
    tflite.TensorType.INT64: np.dtype("<i8"),
    tflite.TensorType.INT8: np.dtype("i1"),
    tflite.TensorType.INT16: np.dtype("<i2"),
}

#: The operand signature of every operator the frontend imports: the
#: operator layer's (one source of truth).
SIGNATURES: Mapping[str, Signature] = MappingProxyType({t: d.signature for t, d in OPERATORS.items()})

SUPPORTED_OPS = frozenset(SIGNATURES)

#: Builtin operators refused on purpose, with the reason (none now: RELU_N1_TO_1, which TFLM has no
#: kernel for, runs with LiteRT's semantics; see tvmdevice.optable.tflm.BEYOND_TFLM).
NOT_IN_TFLM: Mapping[str, str] = MappingProxyType({})

_ACTIVATIONS = {
    tflite.ActivationFunctionType.NONE: "NONE",
    tflite.ActivationFunctionType.RELU: "RELU",
    tflite.ActivationFunctionType.RELU_N1_TO_1: "RELU_N1_TO_1",
    tflite.ActivationFunctionType.RELU6: "RELU6",
}
_PADDINGS = {tflite.Padding.SAME: "SAME", tflite.Padding.VALID: "VALID"}

#: The TensorType codes TFLM's ConvertTensorType (``flatbuffer_conversions.cc``)
#: knows: FLOAT32 (0) to FLOAT8_E5M2 (22), the schema's TensorType_MAX.
TFLM_TENSOR_TYPES = range(0, 23)


class _OptionError(Exception):
    """Internal: an option value outside what tvmdevice supports."""


class _MalformedOption(Exception):
    """Internal: an option value no TFLite runtime accepts."""


def _quantized_bias_type(o: Any) -> None:
    # TFLM's ParseConv2D / ParseFullyConnected / ParseTransposeConv convert quantized_bias_type with
    # ConvertTensorType and refuse the operator ("Unsupported data type") when
    # it is no TensorType, before any Prepare.  A valid value only matters to
    # int16 kernels (it selects an int32 or int64 bias), so int8 ignores it.
    value = o.QuantizedBiasType()
    if value not in TFLM_TENSOR_TYPES:
        raise _MalformedOption(f"quantized_bias_type {value} is not a tensor type (TFLM refuses the operator)")


def _tensor_type(code: int) -> str:
    # TFLM's ParseArgMax / ParseArgMin convert output_type with ConvertTensorType,
    # which refuses a code that is no TensorType ("Unsupported data type").
    if code not in TFLM_TENSOR_TYPES:
        raise _MalformedOption(f"output_type {code} is not a tensor type (TFLM refuses the operator)")
    return TYPE_NAMES.get(code, str(code))


def _activation(code: int) -> str:
    if code not in _ACTIVATIONS:
        names = {v: k for k, v in vars(tflite.ActivationFunctionType).items() if not k.startswith("_")}
        raise _OptionError(f"fused activation {names.get(code, code)} is not supported")
    return _ACTIVATIONS[code]


def _padding(code: int) -> str:
    if code not in _PADDINGS:
        raise _OptionError(f"padding code {code} is not SAME or VALID")
    return _PADDINGS[code]


def _conv(o: Any) -> dict[str, Any]:
    if isinstance(o, tflite.Conv2DOptions):
        _quantized_bias_type(o)
    return {
        "padding": _padding(o.Padding()),
        "stride_h": o.StrideH(),
        "stride_w": o.StrideW(),
        "dilation_h_factor": o.DilationHFactor(),
        "dilation_w_factor": o.DilationWFactor(),
        "fused_activation": _activation(o.FusedActivationFunction()),
    }


def _depthwise(o: Any) -> dict[str, Any]:
    opts = _conv(o)
    opts["depth_multiplier"] = o.DepthMultiplier()
    return opts


def _fully_connected(o: Any) -> dict[str, Any]:
    _quantized_bias_type(o)
    if o.WeightsFormat() != tflite.FullyConnectedOptionsWeightsFormat.DEFAULT:
        raise _OptionError("shuffled weights format is not supported")
    return {"fused_activation": _activation(o.FusedActivationFunction()), "keep_num_dims": bool(o.KeepNumDims())}


def _transpose_conv(o: Any) -> dict[str, Any]:
    _quantized_bias_type(o)
    return {"padding": _padding(o.Padding()), "stride_h": o.StrideH(), "stride_w": o.StrideW(),
            "fused_activation": _activation(o.FusedActivationFunction())}


def _pool(o: Any) -> dict[str, Any]:
    return {
        "padding": _padding(o.Padding()),
        "stride_h": o.StrideH(),
        "stride_w": o.StrideW(),
        "filter_height": o.FilterHeight(),
        "filter_width": o.FilterWidth(),
        "fused_activation": _activation(o.FusedActivationFunction()),
    }


def _lstm(o: Any) -> dict[str, Any]:
    # The cell gate's activation: TFLM's integer LSTM runs TANH (the schema
    # has no SIGMOID); any other value is refused by the operator layer.
    code = o.FusedActivationFunction()
    activation = "TANH" if code == tflite.ActivationFunctionType.TANH else _activation(code)
    return {"fused_activation": activation, "cell_clip": float(o.CellClip()), "proj_clip": float(o.ProjClip()),
            "time_major": bool(o.TimeMajor()), "asymmetric_quantize_inputs": bool(o.AsymmetricQuantizeInputs()),
            "diagonal_recurrent_tensors": bool(o.DiagonalRecurrentTensors())}


def _svdf(o: Any) -> dict[str, Any]:
    # TFLM's integer SVDF ignores the fused activation; keep its name for reports.
    code = o.FusedActivationFunction()
    activation = "TANH" if code == tflite.ActivationFunctionType.TANH else _activation(code)
    return {"rank": o.Rank(), "fused_activation": activation,
            "asymmetric_quantize_inputs": bool(o.AsymmetricQuantizeInputs())}


def _reshape(o: Any) -> dict[str, Any]:
    if o.NewShapeIsNone():
        return {"new_shape": None}
    return {"new_shape": tuple(int(d) for d in o.NewShapeAsNumpy())}


# op type -> (BuiltinOptions union tag, options class, decoder, required).
# A required options table that is missing is a format error: TFLite would
# run the operator with zeroed options (stride 0), which is meaningless.
_DECODERS: dict[str, tuple[int, type, Callable[[Any], dict[str, Any]], bool]] = {
    "CONV_2D": (tflite.BuiltinOptions.Conv2DOptions, tflite.Conv2DOptions, _conv, True),
    "DEPTHWISE_CONV_2D": (
        tflite.BuiltinOptions.DepthwiseConv2DOptions, tflite.DepthwiseConv2DOptions, _depthwise, True),
    "FULLY_CONNECTED": (
        tflite.BuiltinOptions.FullyConnectedOptions, tflite.FullyConnectedOptions, _fully_connected, False),
    "AVERAGE_POOL_2D": (tflite.BuiltinOptions.Pool2DOptions, tflite.Pool2DOptions, _pool, True),
    "MAX_POOL_2D": (tflite.BuiltinOptions.Pool2DOptions, tflite.Pool2DOptions, _pool, True),
    "SOFTMAX": (tflite.BuiltinOptions.SoftmaxOptions, tflite.SoftmaxOptions,
                lambda o: {"beta": float(o.Beta())}, True),
    "ADD": (tflite.BuiltinOptions.AddOptions, tflite.AddOptions,
            lambda o: {"fused_activation": _activation(o.FusedActivationFunction())}, False),
    "MUL": (tflite.BuiltinOptions.MulOptions, tflite.MulOptions,
            lambda o: {"fused_activation": _activation(o.FusedActivationFunction())}, False),
    # SubOptions.pot_scale_int16 selects TFLite's power-of-two int16 path; TFLM has only the general one.
    "SUB": (tflite.BuiltinOptions.SubOptions, tflite.SubOptions,
            lambda o: {"fused_activation": _activation(o.FusedActivationFunction())}, False),
    "CONCATENATION": (tflite.BuiltinOptions.ConcatenationOptions, tflite.ConcatenationOptions,
                      lambda o: {"axis": o.Axis(), "fused_activation": _activation(o.FusedActivationFunction())},
                      True),
    "RESHAPE": (tflite.BuiltinOptions.ReshapeOptions, tflite.ReshapeOptions, _reshape, False),
    "MEAN": (tflite.BuiltinOptions.ReducerOptions, tflite.ReducerOptions,
             lambda o: {"keep_dims": bool(o.KeepDims())}, False),
    **_shape_options.DECODERS,
    # arithmetic and activations
    "SUM": (tflite.BuiltinOptions.ReducerOptions, tflite.ReducerOptions,
            lambda o: {"keep_dims": bool(o.KeepDims())}, False),
    "REDUCE_MAX": (tflite.BuiltinOptions.ReducerOptions, tflite.ReducerOptions,
                   lambda o: {"keep_dims": bool(o.KeepDims())}, False),
    "LEAKY_RELU": (tflite.BuiltinOptions.LeakyReluOptions, tflite.LeakyReluOptions,
                   lambda o: {"alpha": float(o.Alpha())}, False),
    "ARG_MAX": (tflite.BuiltinOptions.ArgMaxOptions, tflite.ArgMaxOptions,
                lambda o: {"output_type": _tensor_type(o.OutputType())}, False),
    "ARG_MIN": (tflite.BuiltinOptions.ArgMinOptions, tflite.ArgMinOptions,
                lambda o: {"output_type": _tensor_type(o.OutputType())}, False),
    "TRANSPOSE_CONV": (tflite.BuiltinOptions.TransposeConvOptions, tflite.TransposeConvOptions, _transpose_conv,
                       True),
    "BATCH_MATMUL": (tflite.BuiltinOptions.BatchMatMulOptions, tflite.BatchMatMulOptions,
                     lambda o: {"adj_x": bool(o.AdjX()), "adj_y": bool(o.AdjY()),
                                "asymmetric_quantize_inputs": bool(o.AsymmetricQuantizeInputs())}, False),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (tflite.BuiltinOptions.UnidirectionalSequenceLSTMOptions,
                                     tflite.UnidirectionalSequenceLSTMOptions, _lstm, True),
    "SVDF": (tflite.BuiltinOptions.SVDFOptions, tflite.SVDFOptions, _svdf, True),
}

# Defaults when an optional options table is absent (schema defaults).
_DEFAULTS: dict[str, dict[str, Any]] = {
    "FULLY_CONNECTED": {"fused_activation": "NONE", "keep_num_dims": False},
    "ADD": {"fused_activation": "NONE"},
    "MUL": {"fused_activation": "NONE"},
    "SUB": {"fused_activation": "NONE"},
    "RESHAPE": {"new_shape": None},
    "MEAN": {"keep_dims": False},
    **_shape_options.DEFAULTS,
    "SUM": {"keep_dims": False},
    "REDUCE_MAX": {"keep_dims": False},
    "LEAKY_RELU": {"alpha": 0.0},  # TFLM's zeroed TfLiteLeakyReluParams
    "BATCH_MATMUL": {"adj_x": False, "adj_y": False, "asymmetric_quantize_inputs": False},
}


def decode_options(op_type: str, op: Any, where: str) -> dict[str, Any]:
    """Decode the builtin options of ``op`` (a ``tflite.Operator``).

    :param where: "operator 3 (CONV_2D)", used in error messages.
    :raises UnsupportedOperatorError: for option values tvmdevice does not implement.
    :raises ModelFormatError: for a missing or mistyped options table, or a value no
        TFLite runtime accepts (an unknown ``quantized_bias_type``).
    """
    if op_type not in _DECODERS:
        return {}
    tag, cls, decode, required = _DECODERS[op_type]
    kind = op.BuiltinOptionsType()
    if kind == tflite.BuiltinOptions.NONE:
        if required:
            raise ModelFormatError(f"{where} has no builtin options")
        return dict(_DEFAULTS.get(op_type, {}))
    if kind != tag:
        raise ModelFormatError(f"{where} carries builtin options of union type {kind}, expected {tag}")
    table = op.BuiltinOptions()
    if table is None:
        raise ModelFormatError(f"{where} has an empty builtin options table")
    options = cls()
    options.Init(table.Bytes, table.Pos)
    try:
        return decode(checked(options, f"{where} options"))
    except _OptionError as e:
        raise UnsupportedOperatorError(f"{where}: {e}") from None
    except _MalformedOption as e:
        raise ModelFormatError(f"{where}: {e}") from None
