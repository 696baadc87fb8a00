"""PAD and PADV2, int8 and int16: CMSIS-NN's arm_pad_s8 (4-D, padding before and after each dimension).

The fill value, the paddings and the shapes are the core's
:class:`tvmdevice.ops.PadData` (TFLM's pad Prepare); cmsis-nn adds only its
limit: at most 4 dimensions, right-aligned to N, H, W, C.  int8 is
arm_pad_s8 (TFLM's CMSIS-NN port runs the same kernel for the same cases);
int16 is the same walk over 2-byte values (TFLM's reference pad takes both).
"""

from __future__ import annotations

from tvmdevice.errors import Refusal
from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import PadData

from ..kernel_table import PAD_DIMS
from . import _common as c

__all__ = ["prepare"]


def prepare(graph: Graph, op: Operator, data: PadData) -> c.KernelPlan:
    """The 4-D shape, paddings and element size of arm_pad_s8's walk."""
    if data.itemsize not in (1, 2):
        raise Refusal(f"cmsis-nn pads int8 and int16 values, not {data.itemsize}-byte ones")
    rank = len(data.in_shape)
    if rank > PAD_DIMS:
        raise Refusal(f"cmsis-nn pads up to {PAD_DIMS} dimensions (arm_pad_s8), the input has {rank}")
    lead = PAD_DIMS - rank
    return c.KernelPlan({"num_inputs": len(op.inputs), "in_shape": (1,) * lead + data.in_shape,
                         "before": (0,) * lead + tuple(a for a, _ in data.paddings),
                         "after": (0,) * lead + tuple(b for _, b in data.paddings),
                         "itemsize": data.itemsize})
