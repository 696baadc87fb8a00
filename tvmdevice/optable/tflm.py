"""TFLM's builtin operators, and for each one tvmdevice does not run, why.

:data:`TFLM_BUILTINS` is the list of builtin operators tflite-micro registers
a kernel for (``MicroMutableOpResolver``'s ``Add*`` methods in
``tensorflow/lite/micro/micro_mutable_op_resolver.h``; a test holds it equal
to the registrations compiled into the installed ``tflite-micro`` package).
What tvmdevice runs is the operator layer's table
(:data:`tvmdevice.ops.OPERATORS`); every TFLM builtin outside it has its
reason in :data:`REASONS` (a test checks both ways), and every operator the
layer runs that TFLM has no kernel for says which oracle it is bit-exact
with in :data:`BEYOND_TFLM`.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

__all__ = ["TFLM_BUILTINS", "REASONS", "BEYOND_TFLM", "unsupported", "beyond_tflm"]

#: Builtin operators TFLM registers a kernel for (custom operators such as
#: ``CIRCULAR_BUFFER`` and the signal library's are not builtins).
TFLM_BUILTINS: frozenset[str] = frozenset({
    "ABS", "ADD", "ADD_N", "ARG_MAX", "ARG_MIN", "ASSIGN_VARIABLE", "AVERAGE_POOL_2D", "BATCH_MATMUL",
    "BATCH_TO_SPACE_ND", "BROADCAST_ARGS", "BROADCAST_TO", "CALL_ONCE", "CAST", "CEIL", "CONCATENATION",
    "CONV_2D", "COS", "CUMSUM", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE", "DEQUANTIZE", "DIV",
    "DYNAMIC_UPDATE_SLICE", "ELU", "EMBEDDING_LOOKUP", "EQUAL", "EXP", "EXPAND_DIMS", "FILL", "FLOOR",
    "FLOOR_DIV", "FLOOR_MOD", "FULLY_CONNECTED", "GATHER", "GATHER_ND", "GREATER", "GREATER_EQUAL",
    "HARD_SWISH", "IF", "L2_NORMALIZATION", "L2_POOL_2D", "LEAKY_RELU", "LESS", "LESS_EQUAL", "LOG",
    "LOGICAL_AND", "LOGICAL_NOT", "LOGICAL_OR", "LOGISTIC", "LOG_SOFTMAX", "MAXIMUM", "MAX_POOL_2D", "MEAN",
    "MINIMUM", "MIRROR_PAD", "MUL", "NEG", "NOT_EQUAL", "PACK", "PAD", "PADV2", "PRELU", "QUANTIZE",
    "READ_VARIABLE", "REDUCE_ALL", "REDUCE_MAX", "REDUCE_MIN", "RELU", "RELU6", "RESHAPE", "RESIZE_BILINEAR",
    "RESIZE_NEAREST_NEIGHBOR", "REVERSE_V2", "ROUND", "RSQRT", "SELECT_V2", "SHAPE", "SIN", "SLICE", "SOFTMAX",
    "SPACE_TO_BATCH_ND", "SPACE_TO_DEPTH", "SPLIT", "SPLIT_V", "SQRT", "SQUARE", "SQUARED_DIFFERENCE", "SQUEEZE",
    "STRIDED_SLICE", "SUB", "SUM", "SVDF", "TANH", "TRANSPOSE", "TRANSPOSE_CONV", "UNIDIRECTIONAL_SEQUENCE_LSTM",
    "UNPACK", "VAR_HANDLE", "WHILE", "ZEROS_LIKE",
})

_FLOAT_ONLY = "TFLM's kernel takes float32 only; tvmdevice runs integer (int8/int16) models"
_BOOL = "needs bool tensors, which the IR does not carry (int8, int16, int32, int64 and float32 only)"
_CONTROL_FLOW = "control flow over several subgraphs; the importer takes models of exactly one subgraph"
_VARIABLES = "resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE); the IR has no resource tensors"
_SHAPES = "run-time shape or constant computation on int32 tensors; tvmdevice's shapes are static"
_INT8_TODO = "not implemented yet (TFLM has an int8 kernel)"
_MOVEMENT_TODO = "not implemented yet (data movement)"
_ARITH_TODO = "not implemented yet (arithmetic)"

#: Every TFLM builtin tvmdevice does not run -> why (one line).
REASONS: Mapping[str, str] = MappingProxyType({
    **dict.fromkeys(("SIN", "COS", "LOG", "SQRT", "SQUARE", "EXP", "CEIL", "FLOOR", "ROUND", "L2_POOL_2D"),
                    _FLOAT_ONLY),
    **dict.fromkeys(("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", "LOGICAL_AND",
                     "LOGICAL_OR", "LOGICAL_NOT", "REDUCE_ALL", "SELECT_V2"), _BOOL),
    **dict.fromkeys(("IF", "WHILE", "CALL_ONCE"), _CONTROL_FLOW),
    **dict.fromkeys(("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"), _VARIABLES),
    **dict.fromkeys(("SHAPE", "BROADCAST_ARGS", "FILL", "ZEROS_LIKE"), _SHAPES),
    "CAST": "a type conversion without quantization parameters: not implemented (QUANTIZE/DEQUANTIZE are)",
    **dict.fromkeys(("ABS", "RSQRT", "DIV"), _INT8_TODO),
    **dict.fromkeys(("BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "MIRROR_PAD",
                     "GATHER_ND", "REVERSE_V2", "DYNAMIC_UPDATE_SLICE", "EMBEDDING_LOOKUP"), _MOVEMENT_TODO),
    **dict.fromkeys(("ADD_N", "CUMSUM", "FLOOR_DIV", "FLOOR_MOD", "NEG", "REDUCE_MIN", "ELU", "L2_NORMALIZATION"),
                    _ARITH_TODO),
})

#: Operators tvmdevice runs that TFLM registers no kernel for -> the oracle its results are bit-exact with.
BEYOND_TFLM: Mapping[str, str] = MappingProxyType({
    "RELU_N1_TO_1": "TFLM has no kernel: bit-exact with LiteRT's int8 ReluX (tensorflow/lite/kernels/activations.cc)",
})


def unsupported() -> list[tuple[str, str]]:
    """``(operator, reason)`` for every TFLM builtin the operator layer does not run, sorted by name."""
    from tvmdevice.ops import OPERATORS

    return sorted((op, REASONS.get(op, "no reason recorded")) for op in TFLM_BUILTINS - set(OPERATORS))


def beyond_tflm() -> dict[str, str]:
    """Operator -> its oracle note, for every operator the layer runs that TFLM has no kernel for."""
    from tvmdevice.ops import OPERATORS

    return {op: BEYOND_TFLM.get(op, "no oracle recorded") for op in sorted(set(OPERATORS) - TFLM_BUILTINS)}
