"""UNIDIRECTIONAL_SEQUENCE_LSTM and SVDF: the kernel for the operand widths, and TFLM's scratch.

The op data (:class:`tvmdevice.ops.LstmData`, :class:`~tvmdevice.ops.SvdfData`)
fills the params structs whole; the step picks the kernel of the activation
(LSTM) or state (SVDF) width and sizes the scratch TFLM requests, planned with
the rest of memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._common import KernelPlan

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator
    from tvmdevice.ops import LstmData, SvdfData

__all__ = ["lstm", "svdf"]


def lstm(graph: "Graph", op: "Operator", d: "LstmData") -> KernelPlan:
    """``lstm_s8`` or ``lstm_s16``; scratch: two int16 buffers of ``scratch_elements``."""
    return KernelPlan(kernel=f"lstm_s{d.activation_bits}", scratch_bytes=2 * d.scratch_elements)


def svdf(graph: "Graph", op: "Operator", d: "SvdfData") -> KernelPlan:
    """``svdf_s8_s16`` or ``svdf_s8_s8``; scratch: the op data's ``scratch_bytes``."""
    return KernelPlan(kernel=f"svdf_s8_s{d.state_bits}", scratch_bytes=d.scratch_bytes)
