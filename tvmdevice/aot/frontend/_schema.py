"""TFLite schema facts the frontend needs: operator codes, tensor types,
operator signatures and the decoding of builtin options into the IR's
option dictionaries (names as in :mod:`tvmdevice.aot.ir`).

Only the generated readers of the ``tflite`` package touch the flatbuffer;
this module maps what they return to plain Python values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import tflite

from tvmdevice.aot.frontend.errors import ModelFormatError, UnsupportedOperatorError

__all__ = [
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
}

_I8 = frozenset({np.dtype("i1")})
_I32 = frozenset({np.dtype("<i4")})
_F32 = frozenset({np.dtype("<f4")})
_SHAPE = frozenset({np.dtype("<i4"), np.dtype("<i8")})


@dataclass(frozen=True)
class Role:
    """What one operand of an operator may be."""

    name: str
    dtypes: frozenset
    constant: bool = False  # must be a constant tensor
    optional: bool = False  # may be absent (index -1) or missing


@dataclass(frozen=True)
class Signature:
    """Operands of a supported operator; ``variadic`` repeats the first input role."""

    inputs: tuple[Role, ...]
    outputs: tuple[Role, ...]
    variadic: bool = False


_ACT = Role("input", _I8)
_OUT = Role("output", _I8)
_CONV = (_ACT, Role("filter", _I8, constant=True), Role("bias", _I32, constant=True, optional=True))

SIGNATURES: dict[str, Signature] = {
    "CONV_2D": Signature(_CONV, (_OUT,)),
    "DEPTHWISE_CONV_2D": Signature(_CONV, (_OUT,)),
    "FULLY_CONNECTED": Signature(
        (_ACT, Role("weights", _I8, constant=True), Role("bias", _I32, constant=True, optional=True)), (_OUT,)
    ),
    "AVERAGE_POOL_2D": Signature((_ACT,), (_OUT,)),
    "MAX_POOL_2D": Signature((_ACT,), (_OUT,)),
    "SOFTMAX": Signature((_ACT,), (_OUT,)),
    "ADD": Signature((Role("input1", _I8), Role("input2", _I8)), (_OUT,)),
    "MUL": Signature((Role("input1", _I8), Role("input2", _I8)), (_OUT,)),
    # The shape operand of RESHAPE is optional and need not be constant: the
    # output tensor's shape is authoritative.
    "RESHAPE": Signature((_ACT, Role("shape", _SHAPE, optional=True)), (_OUT,)),
    "QUANTIZE": Signature((Role("input", _F32 | _I8),), (_OUT,)),
    "DEQUANTIZE": Signature((_ACT,), (Role("output", _F32),)),
    "PAD": Signature((_ACT, Role("paddings", _SHAPE, constant=True)), (_OUT,)),
    "CONCATENATION": Signature((_ACT,), (_OUT,), variadic=True),
    "MEAN": Signature((_ACT, Role("axis", _I32, constant=True)), (_OUT,)),
    "LOGISTIC": Signature((_ACT,), (_OUT,)),
    "TANH": Signature((_ACT,), (_OUT,)),
}

SUPPORTED_OPS = frozenset(SIGNATURES)

_ACTIVATIONS = {
    tflite.ActivationFunctionType.NONE: "NONE",
    tflite.ActivationFunctionType.RELU: "RELU",
    tflite.ActivationFunctionType.RELU_N1_TO_1: "RELU_N1_TO_1",
    tflite.ActivationFunctionType.RELU6: "RELU6",
}
_PADDINGS = {tflite.Padding.SAME: "SAME", tflite.Padding.VALID: "VALID"}


class _OptionError(Exception):
    """Internal: an option value outside what tvmdevice supports."""


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
    if o.WeightsFormat() != tflite.FullyConnectedOptionsWeightsFormat.DEFAULT:
        raise _OptionError("shuffled weights format is not supported")
    return {"fused_activation": _activation(o.FusedActivationFunction()), "keep_num_dims": bool(o.KeepNumDims())}


def _pool(o: Any) -> dict[str, Any]:
    return {
        "padding": _padding(o.Padding()),
        "stride_h": o.StrideH(),
        "stride_w": o.StrideW(),
        "filter_height": o.FilterHeight(),
        "filter_width": o.FilterWidth(),
        "fused_activation": _activation(o.FusedActivationFunction()),
    }


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
    "CONCATENATION": (tflite.BuiltinOptions.ConcatenationOptions, tflite.ConcatenationOptions,
                      lambda o: {"axis": o.Axis(), "fused_activation": _activation(o.FusedActivationFunction())},
                      True),
    "RESHAPE": (tflite.BuiltinOptions.ReshapeOptions, tflite.ReshapeOptions, _reshape, False),
    "MEAN": (tflite.BuiltinOptions.ReducerOptions, tflite.ReducerOptions,
             lambda o: {"keep_dims": bool(o.KeepDims())}, False),
}

# Defaults when an optional options table is absent (schema defaults).
_DEFAULTS: dict[str, dict[str, Any]] = {
    "FULLY_CONNECTED": {"fused_activation": "NONE", "keep_num_dims": False},
    "ADD": {"fused_activation": "NONE"},
    "MUL": {"fused_activation": "NONE"},
    "RESHAPE": {"new_shape": None},
    "MEAN": {"keep_dims": False},
}


def decode_options(op_type: str, op: Any, where: str) -> dict[str, Any]:
    """Decode the builtin options of ``op`` (a ``tflite.Operator``).

    :param where: "operator 3 (CONV_2D)", used in error messages.
    :raises UnsupportedOperatorError: for option values tvmdevice does not implement.
    :raises ModelFormatError: for a missing or mistyped options table.
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
        return decode(options)
    except _OptionError as e:
        raise UnsupportedOperatorError(f"{where}: {e}") from None
