"""ADD, SUB, MUL, the broadcasting binary operators and QUANTIZE: the shape of the host's loops.

Offsets, multipliers, shifts and the activation range are the op data's
(:class:`tvmdevice.ops.ElementwiseData` and the broadcasting operators'
:class:`~tvmdevice.ops._broadcast.BroadcastData`); the C loops walk
``TVMD_C_MAX_DIMS`` dimensions with per-input element strides, 0 along a
broadcast dimension.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..kernel_table import MAX_DIMS
from ._common import KernelPlan, right_aligned

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator
    from tvmdevice.ops import ElementwiseData, QuantizeData
    from tvmdevice.ops._broadcast import BroadcastData

__all__ = ["elementwise", "broadcast", "quantize"]


def _strides(shape: tuple[int, ...], s1: tuple[int, ...], s2: tuple[int, ...]) -> KernelPlan:
    return KernelPlan({"out_shape": shape, "in1_strides": s1, "in2_strides": s2})


def elementwise(graph: "Graph", op: "Operator", d: "ElementwiseData") -> KernelPlan:
    """ADD, SUB and MUL (int8 and int16): equal shapes run as one flat row, whatever the rank."""
    if d.broadcasts:
        return _strides(*d.broadcast_strides(MAX_DIMS))
    return _strides(right_aligned((d.size,), MAX_DIMS, 1), right_aligned((1,), MAX_DIMS, 0),
                    right_aligned((1,), MAX_DIMS, 0))


def broadcast(graph: "Graph", op: "Operator", d: "BroadcastData") -> KernelPlan:
    """MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU: the broadcast walk, always."""
    return _strides(*d.broadcast_strides(MAX_DIMS))


def quantize(graph: "Graph", op: "Operator", d: "QuantizeData") -> KernelPlan:
    """int8 QUANTIZE: from float32 by this kernel, from int8 by ``requantize_s8``."""
    return KernelPlan() if d.from_float else KernelPlan(kernel="requantize_s8")
