"""SVDF: cmsis-nn's scratch and state.

The op data is the core's :class:`~tvmdevice.ops.svdf.SvdfData` (TFLM's
PrepareSvdf: the two rescales, the state type and zero point).  CMSIS-NN has
one kernel per state type (arm_svdf_s8 for int8, arm_svdf_state_s16_s8 for
int16); here one C kernel takes both, told by ``state_bits``.  The int32 sums
wrap in uint32 as TFLM's do, in any order, so no bound is needed; the
scratch (int32 filter and unit sums, CMSIS-NN's ``ctx`` and ``scratch_output``
buffers) is the kernel's size query.

One semantic difference, TFLM wins: arm_svdf_s8 takes no state zero point (its
int8 state is symmetric); TFLM's reference subtracts it, so the kernel does.
"""

from __future__ import annotations

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.ops.svdf import SvdfData

from . import _common as c

__all__ = ["prepare_svdf"]


def prepare_svdf(graph: Graph, op: Operator, data: SvdfData) -> c.KernelPlan:
    """Nothing to pack: the weights and the state are read (and the state written) in place."""
    return c.KernelPlan({"has_bias": int(data.has_bias)})
