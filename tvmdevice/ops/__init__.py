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

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.errors import ModelFormatError, Refusal, TVMDeviceError
from tvmdevice.ops import (
    _checks,
    activations,
    concatenation,
    conv,
    elementwise,
    fully_connected,
    lstm,
    mean,
    pad,
    pooling,
    quantize,
    softmax,
    svdf,
    views,
)
from tvmdevice.ops._base import OpData, OpDef, Operand, Signature
from tvmdevice.ops.activations import ActivationData
from tvmdevice.ops.concatenation import ConcatData
from tvmdevice.ops.conv import ConvData
from tvmdevice.ops.elementwise import ElementwiseData
from tvmdevice.ops.fully_connected import FullyConnectedData
from tvmdevice.ops.lstm import LstmData
from tvmdevice.ops.mean import MeanData
from tvmdevice.ops.pad import PadData
from tvmdevice.ops.pooling import PoolData
from tvmdevice.ops.quantize import DequantizeData, QuantizeData
from tvmdevice.ops.softmax import SoftmaxData
from tvmdevice.ops.svdf import SvdfData
from tvmdevice.ops.views import ViewData

__all__ = [
    "OPERATORS", "validate", "analyze", "OpData", "OpDef", "Operand", "Signature",
    "ConvData", "FullyConnectedData", "PoolData", "SoftmaxData", "ElementwiseData", "ViewData", "PadData",
    "ConcatData", "MeanData", "QuantizeData", "DequantizeData", "ActivationData",
    "LstmData", "SvdfData",
]

#: Every operator type the layer knows: op type -> its definition.
OPERATORS: Mapping[str, OpDef] = MappingProxyType({
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
    "UNIDIRECTIONAL_SEQUENCE_LSTM": OpDef(lstm.SIGNATURE, lstm.validate, lstm.analyze),
    "SVDF": OpDef(svdf.SIGNATURE, svdf.validate, svdf.analyze),
})

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
