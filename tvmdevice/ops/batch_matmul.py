"""BATCH_MATMUL, int8: TFLM's BatchMatMulPrepare (``batch_matmul.cc``).

``output[..., i, j] = sum_k (lhs[..., i, k] - lhs_zp) * (rhs[..., k, j] -
rhs_zp)`` (``adj_x`` / ``adj_y`` read lhs / rhs with their last two
dimensions swapped), requantized by ``float32(lhs_scale * rhs_scale) /
output_scale`` (GetQuantizedConvolutionMultipler) and clamped to int8.
Both operands have 2 to 5 dimensions; the batch dimensions broadcast.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, OpData, Operand, Signature

__all__ = ["BatchMatMulData", "SIGNATURE", "MAX_RANK", "validate", "analyze"]

SIGNATURE = Signature((Operand("lhs", INT8), Operand("rhs", INT8)), (Operand("output", INT8),),
                      ("adj_x", "adj_y", "asymmetric_quantize_inputs"))

MAX_RANK = 5


@dataclass(frozen=True)
class BatchMatMulData(OpData):
    """BATCH_MATMUL op data; batch shapes right-aligned to :data:`MAX_RANK` - 2 dimensions."""

    out_batch: tuple[int, ...]  # the output's batch dimensions (3 values, 1 before)
    lhs_batch_strides: tuple[int, ...]  # elements per batch step, 0 along a broadcast dimension
    rhs_batch_strides: tuple[int, ...]
    rows: int  # lhs rows (output rows)
    cols: int  # rhs columns (output columns)
    depth: int  # the accumulation
    adj_x: bool
    adj_y: bool
    lhs_offset: int  # -lhs zero point
    rhs_offset: int  # -rhs zero point
    output_offset: int
    output_multiplier: int
    output_shift: int
    macs: int


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, Tensor, dict]:
    (lhs, rhs), _, out = c.operands(graph, op, 2)
    for t, role in ((lhs, "lhs"), (rhs, "rhs")):
        if not 2 <= len(t.shape) <= MAX_RANK:
            raise c.malformed(op, f"{role} tensor {t.index} must have 2 to {MAX_RANK} dimensions, has {list(t.shape)}")
    adj_x, adj_y = bool(op.options.get("adj_x", False)), bool(op.options.get("adj_y", False))
    rank = max(len(lhs.shape), len(rhs.shape))
    ls = (1,) * (rank - len(lhs.shape)) + tuple(int(d) for d in lhs.shape)
    rs = (1,) * (rank - len(rhs.shape)) + tuple(int(d) for d in rhs.shape)
    try:
        batch = tuple(int(d) for d in np.broadcast_shapes(ls[:-2], rs[:-2]))
    except ValueError:
        raise c.malformed(op, f"batch dimensions of {list(lhs.shape)} and {list(rhs.shape)} do not broadcast") from None
    rows, depth = (ls[-1], ls[-2]) if adj_x else (ls[-2], ls[-1])
    depth_r, cols = (rs[-1], rs[-2]) if adj_y else (rs[-2], rs[-1])
    if depth != depth_r:
        raise c.malformed(op, f"lhs {list(lhs.shape)} and rhs {list(rhs.shape)} (adj_x={adj_x}, adj_y={adj_y}) "
                              f"accumulate {depth} and {depth_r} values")
    c.check_shape(op, out, batch + (rows, cols), "output")
    return lhs, rhs, out, {"ls": ls, "rs": rs, "batch": batch, "rows": rows, "cols": cols, "depth": depth,
                           "adj_x": adj_x, "adj_y": adj_y}


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts and ranks, broadcastable batches, equal accumulation depths, the output shape."""
    _parts(graph, op)


def _batch_strides(shape: tuple[int, ...], batch: tuple[int, ...]) -> tuple[int, ...]:
    matrix = shape[-1] * shape[-2]
    strides = c.broadcast_strides(shape[:-2], batch) if batch else ()
    padded = (0,) * (MAX_RANK - 2 - len(batch)) + tuple(s * matrix for s in strides)
    return padded


def analyze(graph: Graph, op: Operator) -> BatchMatMulData:
    """TFLM's Prepare for int8 BATCH_MATMUL."""
    lhs, rhs, out, g = _parts(graph, op)
    s_l, z_l = c.per_tensor_int8(op, lhs, "lhs")
    s_r, z_r = c.per_tensor_int8(op, rhs, "rhs")
    s_o, z_o = c.per_tensor_int8(op, out, "output")
    # The scale product in double, as tflite-micro rounds (see ops/fully_connected.py).
    mult, shift = c.multiplier(op, s_l * s_r / s_o)
    batch = g["batch"]
    return BatchMatMulData(
        op_index=op.index, op_type=op.type, out_batch=(1,) * (MAX_RANK - 2 - len(batch)) + batch,
        lhs_batch_strides=_batch_strides(g["ls"], batch), rhs_batch_strides=_batch_strides(g["rs"], batch),
        rows=g["rows"], cols=g["cols"], depth=g["depth"], adj_x=g["adj_x"], adj_y=g["adj_y"], lhs_offset=-z_l,
        rhs_offset=-z_r, output_offset=z_o, output_multiplier=mult, output_shift=shift,
        macs=c.count(batch) * g["rows"] * g["cols"] * g["depth"])
