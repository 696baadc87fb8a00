"""The shape and data-movement operators: shapes, strides and block sizes in the C loops' form.

Every kernel here moves bytes, so one kernel serves int8 and int16: the op
data (:mod:`tvmdevice.ops` ``CopyData``, ``SplitData``, ``ConcatData``,
``PadData``, ``ViewData``) gives shapes, strides and sizes in elements; the
host right-aligns them to its loops' rank and turns block sizes into bytes.
The int8 PAD and CONCATENATION have kernels of their own; their other
element types run on ``pad_any`` and ``join``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tvmdevice.errors import Refusal
from tvmdevice.ops._checks import readonly

from ..kernel_table import COPY_DIMS, MAX_CONCAT_INPUTS, PAD_DIMS, SHAPE_PAD_DIMS
from ._common import KernelPlan, right_aligned

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator
    from tvmdevice.ops import ConcatData, CopyData, PadData, SplitData, ViewData

__all__ = ["pad", "pad_any", "concatenation", "join", "reshape", "strided_copy", "split"]


def _bytes(sizes: tuple[int, ...], itemsize: int) -> np.ndarray:
    return readonly(np.array([s * itemsize for s in sizes], dtype=np.int32))


def pad(graph: "Graph", op: "Operator", d: "PadData") -> KernelPlan:
    """PAD: int8 on ``pad_s8`` (shapes and leading padding at ``TVMD_C_PAD_DIMS``), other types on ``pad_any``."""
    if d.itemsize != 1:
        return KernelPlan(pad_any(graph, op, d).values, kernel="pad_any")
    return KernelPlan({"in_shape": right_aligned(d.in_shape, PAD_DIMS, 1),
                       "out_shape": right_aligned(d.out_shape, PAD_DIMS, 1),
                       "before": right_aligned(tuple(a for a, _ in d.paddings), PAD_DIMS, 0)})


def pad_any(graph: "Graph", op: "Operator", d: "PadData") -> KernelPlan:
    """PADV2, and PAD of int16: shapes and leading padding at ``TVMD_C_SHAPE_PAD_DIMS``."""
    return KernelPlan({"num_inputs": len(op.inputs), "in_shape": right_aligned(d.in_shape, SHAPE_PAD_DIMS, 1),
                       "out_shape": right_aligned(d.out_shape, SHAPE_PAD_DIMS, 1),
                       "before": right_aligned(tuple(a for a, _ in d.paddings), SHAPE_PAD_DIMS, 0)})


def concatenation(graph: "Graph", op: "Operator", d: "ConcatData") -> KernelPlan:
    """CONCATENATION: int8 on ``concatenation_s8`` (block sizes padded to ``TVMD_C_MAX_CONCAT_INPUTS``),
    other types on ``join``."""
    if graph.tensors[op.outputs[0]].dtype.itemsize != 1:
        return KernelPlan(join(graph, op, d).values, kernel="join")
    return KernelPlan({"copy_sizes": d.copy_sizes + (0,) * (MAX_CONCAT_INPUTS - d.inputs_count)})


def join(graph: "Graph", op: "Operator", d: "ConcatData") -> KernelPlan:
    """PACK (any element type) and CONCATENATION of int16: block copies in bytes."""
    itemsize = np.dtype(graph.tensors[op.outputs[0]].dtype).itemsize
    return KernelPlan({"copy_bytes": _bytes(d.copy_sizes, itemsize)})


def reshape(graph: "Graph", op: "Operator", d: "ViewData") -> KernelPlan:
    """RESHAPE, SQUEEZE, EXPAND_DIMS of a constant: a copy (placement aliases a computed tensor's)."""
    src, dst = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if src.nbytes != dst.nbytes:
        raise Refusal(f"RESHAPE of {src.nbytes} bytes into {dst.nbytes}", op=op, device="c")
    return KernelPlan({"num_inputs": len(op.inputs), "nbytes": dst.nbytes})


def strided_copy(graph: "Graph", op: "Operator", d: "CopyData") -> KernelPlan:
    """TRANSPOSE, SLICE, STRIDED_SLICE, BROADCAST_TO: output shape and input strides at ``TVMD_C_COPY_DIMS``."""
    return KernelPlan({"num_inputs": len(op.inputs), "out_shape": right_aligned(d.out_shape, COPY_DIMS, 1),
                       "in_strides": right_aligned(d.strides, COPY_DIMS, 0)})


def split(graph: "Graph", op: "Operator", d: "SplitData") -> KernelPlan:
    """SPLIT, SPLIT_V, UNPACK: each output's block size in bytes."""
    return KernelPlan({"num_inputs": len(op.inputs), "outputs_count": len(d.copy_sizes),
                       "copy_bytes": _bytes(d.copy_sizes, d.itemsize)})
