"""The operator layer: each operator's signature, graph validation and TFLM-exact op data.

Framework-neutral (it knows the IR, never a device or a frontend): the
frontend calls :func:`validate` for every operator at load time, the
pipeline calls :func:`analyze` once per operator, and every device builds
its kernel parameters from the returned :class:`OpData`, adding only its own
packing and limits.

* :func:`validate` raises :class:`~tvmdevice.errors.ModelFormatError` for a
  malformed operator (operand counts, ranks, shapes, option sanity).
* :func:`analyze` also raises :class:`~tvmdevice.errors.Refusal` for
  parameters no TFLM int8 kernel supports (float tensors, an unknown fused
  activation, a rescale factor outside the requantization's range...).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Callable, Mapping, TypeVar

from tvmdevice.errors import ModelFormatError, Refusal, TVMDeviceError
from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import (
    _checks,
    activations,
    arg_min_max,
    batch_matmul,
    concatenation,
    conv,
    elementwise,
    fully_connected,
    hard_swish,
    int16,
    log_softmax,
    lstm,
    mean,
    minmax,
    pad,
    pooling,
    prelu,
    quantize,
    reduce,
    relu,
    shape_ops,
    softmax,
    squared_difference,
    svdf,
    transpose_conv,
    views,
)
from tvmdevice.ops._base import OpData, OpDef, Operand, Signature, kernel_key
from tvmdevice.ops.activations import ActivationData
from tvmdevice.ops.concatenation import ConcatData
from tvmdevice.ops.conv import ConvData
from tvmdevice.ops.elementwise import ElementwiseData
from tvmdevice.ops.fully_connected import FullyConnectedData
from tvmdevice.ops.gather import GatherData
from tvmdevice.ops.lstm import LstmData
from tvmdevice.ops.mean import MeanData
from tvmdevice.ops.pad import PadData
from tvmdevice.ops.pooling import PoolData
from tvmdevice.ops.quantize import DequantizeData, QuantizeData
from tvmdevice.ops.resize import ResizeData
from tvmdevice.ops.softmax import SoftmaxData
from tvmdevice.ops.split import SplitData
from tvmdevice.ops.strided import CopyData
from tvmdevice.ops.svdf import SvdfData
from tvmdevice.ops.views import ViewData

__all__ = [
    "OPERATORS", "validate", "analyze", "OpData", "OpDef", "Operand", "Signature",
    "ConvData", "FullyConnectedData", "PoolData", "SoftmaxData", "ElementwiseData", "ViewData", "PadData",
    "ConcatData", "MeanData", "QuantizeData", "DequantizeData", "ActivationData", "kernel_key",
    "CopyData", "SplitData", "GatherData", "ResizeData",
    "LstmData", "SvdfData",
]

#: Every operator type the layer knows: op type -> its definition (int16 variants folded in by
#: :func:`tvmdevice.ops.int16.widen`).
OPERATORS: Mapping[str, OpDef] = MappingProxyType(int16.widen({
    "CONV_2D": OpDef(conv.SIGNATURE, conv.validate, conv.analyze),
    "DEPTHWISE_CONV_2D": OpDef(conv.DEPTHWISE_SIGNATURE, conv.validate, conv.analyze),
    "FULLY_CONNECTED": OpDef(fully_connected.SIGNATURE, fully_connected.validate, fully_connected.analyze),
    "AVERAGE_POOL_2D": OpDef(pooling.SIGNATURE, pooling.validate, pooling.analyze),
    "MAX_POOL_2D": OpDef(pooling.SIGNATURE, pooling.validate, pooling.analyze),
    "SOFTMAX": OpDef(softmax.SIGNATURE, softmax.validate, softmax.analyze),
    "ADD": OpDef(elementwise.SIGNATURE, elementwise.validate, elementwise.analyze),
    "MUL": OpDef(elementwise.SIGNATURE, elementwise.validate, elementwise.analyze),
    "RESHAPE": OpDef(views.RESHAPE_SIGNATURE, views.validate, views.analyze),
    "PAD": OpDef(pad.SIGNATURE, pad.validate, pad.analyze),
    "CONCATENATION": OpDef(concatenation.SIGNATURE, concatenation.validate, concatenation.analyze),
    "MEAN": OpDef(mean.SIGNATURE, mean.validate, mean.analyze),
    "QUANTIZE": OpDef(quantize.QUANTIZE_SIGNATURE, quantize.validate, quantize.analyze),
    "DEQUANTIZE": OpDef(quantize.DEQUANTIZE_SIGNATURE, quantize.validate, quantize.analyze),
    "LOGISTIC": OpDef(activations.SIGNATURE, activations.validate, activations.analyze),
    "TANH": OpDef(activations.SIGNATURE, activations.validate, activations.analyze),
    # arithmetic and activations
    "MAXIMUM": OpDef(minmax.SIGNATURE, minmax.validate, minmax.analyze),
    "MINIMUM": OpDef(minmax.SIGNATURE, minmax.validate, minmax.analyze),
    "SQUARED_DIFFERENCE": OpDef(squared_difference.SIGNATURE, squared_difference.validate,
                                squared_difference.analyze),
    "RELU": OpDef(relu.SIGNATURE, relu.validate, relu.analyze),
    "RELU6": OpDef(relu.SIGNATURE, relu.validate, relu.analyze),
    "RELU_N1_TO_1": OpDef(relu.SIGNATURE, relu.validate, relu.analyze),  # no TFLM kernel: LiteRT's semantics
    "LEAKY_RELU": OpDef(relu.LEAKY_RELU_SIGNATURE, relu.validate, relu.analyze),
    "HARD_SWISH": OpDef(hard_swish.SIGNATURE, hard_swish.validate, hard_swish.analyze),
    "PRELU": OpDef(prelu.SIGNATURE, prelu.validate, prelu.analyze),
    "ARG_MAX": OpDef(arg_min_max.SIGNATURE, arg_min_max.validate, arg_min_max.analyze),
    "ARG_MIN": OpDef(arg_min_max.SIGNATURE, arg_min_max.validate, arg_min_max.analyze),
    "SUM": OpDef(reduce.SIGNATURE, reduce.validate, reduce.analyze),
    "REDUCE_MAX": OpDef(reduce.SIGNATURE, reduce.validate, reduce.analyze),
    "TRANSPOSE_CONV": OpDef(transpose_conv.SIGNATURE, transpose_conv.validate, transpose_conv.analyze),
    "BATCH_MATMUL": OpDef(batch_matmul.SIGNATURE, batch_matmul.validate, batch_matmul.analyze),
    "LOG_SOFTMAX": OpDef(log_softmax.SIGNATURE, log_softmax.validate, log_softmax.analyze),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": OpDef(lstm.SIGNATURE, lstm.validate, lstm.analyze),
    "SVDF": OpDef(svdf.SIGNATURE, svdf.validate, svdf.analyze),
    **shape_ops.OPERATORS,
}))

_T = TypeVar("_T")
# What a hand-built or corrupted graph makes the checks trip over (a missing
# option, a non-numeric value): a format error naming the operator.
_LOW_LEVEL = (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError, OverflowError, AttributeError)


def _guarded(op: Operator, fn: Callable[[], _T]) -> _T:
    try:
        return fn()
    except TVMDeviceError:
        raise
    except _LOW_LEVEL as e:
        raise ModelFormatError(f"operator {op.index} ({op.type}) is malformed: {type(e).__name__}: {e}") from None


def validate(graph: Graph, op: Operator) -> None:
    """Check ``op``'s structure: operand counts, ranks, shape consistency, option sanity.

    No device is involved; an operator type the layer does not know passes.
    Parameters a kernel may not support (data types, quantization, an
    unknown padding or activation) are :func:`analyze`'s business.

    :raises ModelFormatError: naming the operator and the inconsistency.
    """
    definition = OPERATORS.get(op.type)
    if definition is None:
        return
    try:
        _guarded(op, lambda: definition.validate(graph, op))
    except Refusal:
        # An option value no kernel supports stops the structural checks
        # early; analyze refuses the operator with that reason.
        pass


def analyze(graph: Graph, op: Operator) -> OpData | None:
    """:func:`validate` ``op`` and compute its TFLM op data (TFLM's Prepare), once for every device.

    :returns: the op data, or ``None`` for an operator type the layer does not
        know (a third-party device may still implement it).
    :raises Refusal: parameters outside what TFLM's int8 kernels support.
    :raises ModelFormatError: a malformed operator.
    """
    definition = OPERATORS.get(op.type)
    if definition is None:
        return None
    data = _guarded(op, lambda: definition.analyze(graph, op))
    _checks.check_element_limits(graph, op)
    return data
