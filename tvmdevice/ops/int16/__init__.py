"""The int16x8 variants of the operator layer, and SUB.

TFLM runs many operators on int16 activations (with int8 weights: the
converter's "16x8" quantization).  Each module here computes TFLM's op data
for the int16 variants of one operator family; :func:`widen` folds them into
the operator table: the operator's signature accepts int16 where TFLM does,
and its analysis dispatches on the operator's data types (an operator with
an int16 input or output goes to the int16 analysis, the rest to the int8
one).  The op data of an int16 variant names it
(:attr:`~tvmdevice.ops.OpData.variant`), so only devices that declare
``"<OP>:<variant>"`` are offered the operator
(:func:`~tvmdevice.ops.kernel_key`).

SUB is defined here whole (int8 and int16): it is ADD's family.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping

import numpy as np

from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import elementwise as _elementwise
from tvmdevice.ops._base import INT16, INT32, INT64, OpData, OpDef, Operand
from tvmdevice.ops.int16 import activations, conv, elementwise, pooling, quantize, softmax
from tvmdevice.ops.int16.activations import Activation16Data
from tvmdevice.ops.int16.conv import Conv16Data, FullyConnected16Data
from tvmdevice.ops.int16.elementwise import Elementwise16Data
from tvmdevice.ops.int16.pooling import Pool16Data
from tvmdevice.ops.int16.quantize import Quantize16Data
from tvmdevice.ops.int16.softmax import Softmax8to16Data, Softmax16Data

__all__ = ["INT16_ANALYSES", "NEW_OPERATORS", "widen", "Elementwise16Data", "Quantize16Data", "Conv16Data",
           "FullyConnected16Data", "Pool16Data", "Softmax8to16Data", "Softmax16Data", "Activation16Data"]

_Analyze = Callable[[Graph, Operator], "OpData | None"]
_Validate = Callable[[Graph, Operator], None]

#: Operator type -> (its int16 analysis, its int16 validation or None for the int8 one, the
#: operand roles that may be int16).
INT16_ANALYSES: Mapping[str, tuple[_Analyze, _Validate | None, tuple[str, ...]]] = {
    "ADD": (elementwise.analyze, None, ("input1", "input2", "output")),
    "MUL": (elementwise.analyze, None, ("input1", "input2", "output")),
    "QUANTIZE": (quantize.analyze, None, ("input", "output")),
    "CONV_2D": (conv.analyze_conv, conv.validate_conv, ("input", "output")),
    "DEPTHWISE_CONV_2D": (conv.analyze_conv, conv.validate_conv, ("input", "output")),
    "FULLY_CONNECTED": (conv.analyze_fully_connected, conv.validate_fully_connected, ("input", "output")),
    "AVERAGE_POOL_2D": (pooling.analyze, None, ("input", "output")),
    "MAX_POOL_2D": (pooling.analyze, None, ("input", "output")),
    "SOFTMAX": (softmax.analyze, None, ("input", "output")),
    "LOGISTIC": (activations.analyze, None, ("input", "output")),
    "TANH": (activations.analyze, None, ("input", "output")),
}

#: Operators this package defines whole.
NEW_OPERATORS: Mapping[str, OpDef] = {
    "SUB": OpDef(elementwise.SUB_SIGNATURE, _elementwise.validate, elementwise.analyze),
}


def _has_int16(graph: Graph, op: Operator) -> bool:
    ends = [i for i in (*op.inputs[:1], *op.outputs[:1]) if 0 <= i < len(graph.tensors)]
    return any(np.dtype(graph.tensors[i].dtype) == np.int16 for i in ends)


def _dispatch(int8: Callable, int16: Callable) -> Callable:
    """``int16`` for an operator with an int16 input or output, else ``int8``."""
    def by_type(graph: Graph, op: Operator) -> Any:
        return (int16 if _has_int16(graph, op) else int8)(graph, op)

    by_type.__doc__ = f"{int8.__doc__} (int16 variants: {int16.__doc__})"
    return by_type


#: Operator type -> operand role -> data types an int16 variant adds besides int16 (QUANTIZE int16 -> int32).
EXTRA_DTYPES: Mapping[str, Mapping[str, frozenset]] = {"QUANTIZE": {"output": INT32}}


def _widened(role: Operand, roles: tuple[str, ...], extra: Mapping[str, frozenset]) -> Operand:
    # An int16 activation goes with an int64 (or int32) bias.
    if role.name == "bias":
        return replace(role, dtypes=role.dtypes | INT64)
    return replace(role, dtypes=role.dtypes | INT16 | extra.get(role.name, frozenset())) if role.name in roles \
        else role


def widen(table: Mapping[str, OpDef]) -> dict[str, OpDef]:
    """``table`` with the int16 variants folded in and SUB added."""
    out = dict(table)
    for op_type, (int16, validate16, roles) in INT16_ANALYSES.items():
        d = out[op_type]
        sig = d.signature
        extra = EXTRA_DTYPES.get(op_type, {})
        widened = replace(sig, inputs=tuple(_widened(r, roles, extra) for r in sig.inputs),
                          outputs=tuple(_widened(r, roles, extra) for r in sig.outputs))
        validate = d.validate if validate16 is None else _dispatch(d.validate, validate16)
        out[op_type] = OpDef(widened, validate, _dispatch(d.analyze, int16))
    out.update(NEW_OPERATORS)
    return out
