"""MAXIMUM, MINIMUM, TRANSPOSE_CONV and BATCH_MATMUL: cmsis-nn's limits.

The op data is the core's (:mod:`tvmdevice.ops.minmax`,
:mod:`tvmdevice.ops.transpose_conv`, :mod:`tvmdevice.ops.batch_matmul`);
the kernels read their int8 operands in place, so nothing is packed and one
kernel serves the host and the M-profile packing.  cmsis-nn's own limits:
MAXIMUM/MINIMUM broadcast over 4 dimensions (arm_maximum_s8's
``cmsis_nn_dims``); TRANSPOSE_CONV takes an int32 scratch image of one
batch's output (its ``_get_buffer_size``) and the int32 coordinate bound.
"""

from __future__ import annotations

from tvmdevice.errors import Refusal
from tvmdevice.ir import Graph, Operator
from tvmdevice.ops.batch_matmul import BatchMatMulData
from tvmdevice.ops.minmax import MinMaxData
from tvmdevice.ops.transpose_conv import TransposeConvData

from . import _common as c

__all__ = ["prepare_minmax", "prepare_transpose_conv", "prepare_batch_matmul", "MINMAX_RANK"]

#: arm_maximum_s8 / arm_minimum_s8 take ``cmsis_nn_dims``: [n, h, w, c].
MINMAX_RANK = 4


def _dims(shape: tuple[int, ...]) -> tuple[int, ...]:
    return (1,) * (MINMAX_RANK - len(shape)) + tuple(shape)


def prepare_minmax(graph: Graph, op: Operator, data: MinMaxData) -> c.KernelPlan:
    """The 4-D dims of the output and both inputs (broadcast where an input has 1)."""
    if len(data.out_shape) > MINMAX_RANK and data.broadcasts:
        raise Refusal(f"broadcasting over {len(data.out_shape)} dimensions; cmsis-nn's {op.type} takes "
                      f"{MINMAX_RANK} ([n, h, w, c])")
    if not data.broadcasts:
        flat = (1, 1, 1, data.size)
        return c.KernelPlan({"dims": flat, "in1_dims": flat, "in2_dims": flat})
    return c.KernelPlan({"dims": _dims(data.out_shape), "in1_dims": _dims(data.in1_shape),
                         "in2_dims": _dims(data.in2_shape)})


def prepare_transpose_conv(graph: Graph, op: Operator, data: TransposeConvData) -> c.KernelPlan:
    """The coordinate bound; the op data's QUANT members and channel quantization as they are.

    The int32 scratch sums wrap in uint32 exactly as TFLM's int32 ones do in
    practice, in any order, so no accumulator bound is needed.
    """
    c.constant(graph.tensor(op.inputs[1]), "filter")
    c.check_extent(data.out_h, data.in_h, data.stride_h, data.filter_h)
    c.check_extent(data.out_w, data.in_w, data.stride_w, data.filter_w)
    return c.KernelPlan({"q": data})


def prepare_batch_matmul(graph: Graph, op: Operator, data: BatchMatMulData) -> c.KernelPlan:
    """Nothing to pack.  The zero-point folding is exact in wrapping uint32 arithmetic, so
    no depth is refused."""
    return c.KernelPlan({"adj_x": int(data.adj_x), "adj_y": int(data.adj_y)})
