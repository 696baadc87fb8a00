"""The host's calls for the shape and data-movement operators (merged into :mod:`tvmdevice.host.calls`).

Each plan names its kernel of :mod:`tvmdevice.host.shape_layouts` and adds
what the C loops need in their own form: shapes and strides right-aligned to
the loop's rank, block sizes in bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from tvmdevice import ops
from tvmdevice.host.shape_layouts import COPY_DIMS, SHAPE_PAD_DIMS
from tvmdevice.ops._checks import readonly

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator

__all__ = ["PLANS", "join", "pad_any"]

_Plan = tuple[str, dict[str, Any]]


def _aligned(values: tuple[int, ...], rank: int, fill: int) -> tuple[int, ...]:
    return (fill,) * (rank - len(values)) + tuple(values)


def _bytes(sizes: tuple[int, ...], itemsize: int) -> np.ndarray:
    return readonly(np.array([s * itemsize for s in sizes], dtype=np.int32))


def _strided_copy(graph: "Graph", op: "Operator", d: ops.CopyData) -> _Plan:
    return "strided_copy", {"num_inputs": len(op.inputs), "out_shape": _aligned(d.out_shape, COPY_DIMS, 1),
                            "in_strides": _aligned(d.strides, COPY_DIMS, 0)}


def _split(graph: "Graph", op: "Operator", d: ops.SplitData) -> _Plan:
    return "split", {"num_inputs": len(op.inputs), "outputs_count": len(d.copy_sizes),
                     "copy_bytes": _bytes(d.copy_sizes, d.itemsize)}


def join(graph: "Graph", op: "Operator", d: ops.ConcatData) -> _Plan:
    """PACK (any element type) and CONCATENATION of int16: block copies in bytes."""
    itemsize = np.dtype(graph.tensors[op.outputs[0]].dtype).itemsize
    return "join", {"copy_bytes": _bytes(d.copy_sizes, itemsize)}


def pad_any(graph: "Graph", op: "Operator", d: ops.PadData) -> _Plan:
    """PADV2, and PAD of int16."""
    return "pad_any", {"num_inputs": len(op.inputs), "in_shape": _aligned(d.in_shape, SHAPE_PAD_DIMS, 1),
                       "out_shape": _aligned(d.out_shape, SHAPE_PAD_DIMS, 1),
                       "before": _aligned(tuple(a for a, _ in d.paddings), SHAPE_PAD_DIMS, 0)}


def _gather(graph: "Graph", op: "Operator", d: ops.GatherData) -> _Plan:
    return "gather_s8", {}


def _resize(graph: "Graph", op: "Operator", d: ops.ResizeData) -> _Plan:
    return ("resize_nearest" if d.op_type == "RESIZE_NEAREST_NEIGHBOR" else "resize_bilinear_s8"), {}


#: op type -> plan, merged into the host's plan table.
PLANS: dict[str, Callable[..., _Plan]] = {
    "TRANSPOSE": _strided_copy, "SLICE": _strided_copy, "STRIDED_SLICE": _strided_copy,
    "BROADCAST_TO": _strided_copy, "SPLIT": _split, "SPLIT_V": _split, "UNPACK": _split, "PACK": join,
    "PADV2": pad_any, "GATHER": _gather, "RESIZE_NEAREST_NEIGHBOR": _resize, "RESIZE_BILINEAR": _resize,
}
