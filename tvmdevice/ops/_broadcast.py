"""The numpy-style broadcast shared by the binary operators MAXIMUM, MINIMUM, SQUARED_DIFFERENCE and PRELU."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.errors import Refusal
from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import OpData

__all__ = ["BroadcastData", "broadcast_operands", "check_broadcast_rank", "shapes"]


@dataclass(frozen=True)
class BroadcastData(OpData):
    """Two inputs broadcast numpy-style to the output shape."""

    out_shape: tuple[int, ...]
    in1_shape: tuple[int, ...]
    in2_shape: tuple[int, ...]
    size: int  # output elements

    @property
    def broadcasts(self) -> bool:
        """Whether the input shapes differ (TFLM's broadcast path)."""
        return self.in1_shape != self.in2_shape

    def broadcast_strides(self, rank: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """``(out_shape, in1_strides, in2_strides)`` right-aligned to ``rank`` dimensions.

        Without broadcasting the tensors are one flat row, whatever their rank.
        Strides count elements and are 0 along a dimension an input broadcasts.

        :raises Refusal: when the output has more than ``rank`` dimensions and broadcasts.
        """
        if not self.broadcasts:
            flat = (1,) * (rank - 1)
            return flat + (self.size,), (0,) * (rank - 1) + (1,), (0,) * (rank - 1) + (1,)
        if len(self.out_shape) > rank:
            raise Refusal(f"broadcasting over {len(self.out_shape)} dimensions; this kernel takes at most {rank}",
                          op=self)
        out = (1,) * (rank - len(self.out_shape)) + self.out_shape
        return out, c.broadcast_strides(self.in1_shape, out), c.broadcast_strides(self.in2_shape, out)


def shapes(t: Tensor) -> tuple[int, ...]:
    return tuple(int(d) for d in t.shape)


def broadcast_operands(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, Tensor, tuple[int, ...]]:
    """``(input1, input2, output, output shape)``; the output must have the broadcast shape."""
    (in1, in2), _, out = c.operands(graph, op, 2)
    try:
        shape = tuple(int(d) for d in np.broadcast_shapes(shapes(in1), shapes(in2)))
    except ValueError:
        raise c.malformed(op, f"input shapes {list(in1.shape)} and {list(in2.shape)} do not broadcast") from None
    c.check_shape(op, out, shape, "output")
    return in1, in2, out, shape


def check_broadcast_rank(op: Operator, in1: Tensor, in2: Tensor, out_shape: tuple[int, ...], limit: int) -> None:
    """Refuse a broadcast over more dimensions than TFLM's broadcast loop for ``op`` takes."""
    if shapes(in1) != shapes(in2) and len(out_shape) > limit:
        raise c.refuse(op, f"broadcasting is limited to {limit} dimensions, the output has {len(out_shape)}")
