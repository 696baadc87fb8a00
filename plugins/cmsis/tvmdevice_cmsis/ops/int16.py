"""CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED on int16 activations: cmsis-nn's limits.

The op data is the core's :class:`~tvmdevice.ops.int16.conv.Conv16Data` and
:class:`~tvmdevice.ops.int16.conv.FullyConnected16Data` (TFLM's Prepare for
int16x8: zero points 0, the bias type deciding int64 or int32 accumulation).
CMSIS-NN's s16 kernels read the int8 filter and the int16 input in place, so
nothing is packed: one kernel serves the host and the M-profile packing.

The sums: with an int64 bias (the converter's) or none, products of at most
2^15 * 2^8 summed over fewer than 2^31 taps stay far inside int64, so only
the bias can wrap, and the C adds it in uint64 as TFLM's int64 addition
wraps in practice.  With an int32 bias TFLM sums in int32; the C sums in
uint32, the same bits in any order.  No accumulator bound is needed; the
int32 coordinate bound of the window walk is.
"""

from __future__ import annotations

from tvmdevice.ir import Graph, Operator
from tvmdevice.ops.int16.conv import Conv16Data, FullyConnected16Data

from . import _common as c

__all__ = ["prepare_conv", "prepare_fully_connected"]


def prepare_conv(graph: Graph, op: Operator, data: Conv16Data) -> c.KernelPlan:
    """The window's int32 coordinate bound; the op data fills the struct."""
    c.check_extent(data.in_h, data.out_h, data.stride_h, data.filter_h, data.dilation_h)
    c.check_extent(data.in_w, data.out_w, data.stride_w, data.filter_w, data.dilation_w)
    return c.KernelPlan()


def prepare_fully_connected(graph: Graph, op: Operator, data: FullyConnected16Data) -> c.KernelPlan:
    """Nothing to pack or bound: the op data fills the struct."""
    return c.KernelPlan()
