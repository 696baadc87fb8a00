"""AVERAGE_POOL_2D and MAX_POOL_2D on int16: TFLM's PoolingPrepare (``pooling_common.cc``).

As for int8, nothing is rescaled: input and output share their quantization
(TFLM's rule: float32 scales within 1e-6, equal zero points), and the fused
activation clamps in the int16 range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import _checks as c
from tvmdevice.ops import pooling as base
from tvmdevice.ops.int16 import _checks as c16

__all__ = ["Pool16Data", "analyze"]


@dataclass(frozen=True)
class Pool16Data(base.PoolData):
    """Pooling op data on int16 tensors."""

    variant: ClassVar[str] = "int16"


def analyze(graph: Graph, op: Operator) -> Pool16Data:
    """TFLM's PoolingPrepare for int16."""
    inp, out, g = base._parts(graph, op)
    s_in, z_in = c16.per_tensor(op, inp, "input", "int16")
    s_out, z_out = c16.per_tensor(op, out, "output", "int16")
    if not abs(s_in - s_out) <= c.POOL_SCALE_TOLERANCE or z_in != z_out:
        raise c.refuse(op, f"tensors {inp.index} and {out.index} must share scale and zero point (got {s_in}/{z_in} "
                           f"and {s_out}/{z_out}); the int16 kernel does not rescale")
    act_min, act_max = c16.activation_range16(op, s_out, z_out)
    return Pool16Data(op_index=op.index, op_type=op.type, average=op.type == "AVERAGE_POOL_2D", **g,
                      act_min=act_min, act_max=act_max)
