"""TRANSPOSE: cmsis-nn's arm_transpose_s8 shape (4 dimensions, right-aligned).

The op data is the core's :class:`~tvmdevice.ops.strided.CopyData` (TFLM's
transpose Prepare: the permuted input strides).  cmsis-nn's limits: at most
:data:`~tvmdevice_cmsis.params_s16.TRANSPOSE_DIMS` dimensions (CMSIS-NN's
``cmsis_nn_dims``; TFLM takes 5, a 5-D TRANSPOSE goes to the next device) and
elements of 1 or 2 bytes (arm_transpose_s8 / _s16; the layer moves int8 and int16).
"""

from __future__ import annotations

from tvmdevice.errors import Refusal
from tvmdevice.ir import Graph, Operator
from tvmdevice.ops.strided import CopyData

from ..params_s16 import TRANSPOSE_DIMS
from . import _common as c

__all__ = ["prepare_transpose"]

#: Element sizes the kernel moves.
ITEMSIZES = (1, 2)


def prepare_transpose(graph: Graph, op: Operator, data: CopyData) -> c.KernelPlan:
    """The output shape and permuted input strides, padded in front to 4 dimensions."""
    rank = len(data.out_shape)
    if rank > TRANSPOSE_DIMS:
        raise Refusal(f"cmsis-nn transposes up to {TRANSPOSE_DIMS} dimensions (arm_transpose_s8), the input has "
                      f"{rank}")
    if data.itemsize not in ITEMSIZES:
        raise Refusal(f"cmsis-nn transposes elements of {', '.join(map(str, ITEMSIZES))} bytes, not "
                      f"{data.itemsize}")
    lead = TRANSPOSE_DIMS - rank
    return c.KernelPlan({"out_shape": (1,) * lead + tuple(data.out_shape),
                         "strides": (0,) * lead + tuple(data.strides)})
