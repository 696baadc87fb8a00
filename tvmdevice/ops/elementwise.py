"""ADD and MUL, int8, with broadcasting: TFLM's Prepare (``add_common.cc``, ``mul_common.cc``).

ADD (CalculateOpDataAdd, int8): both inputs are shifted left by 20 bits,
scaled by ``scale_i / (2 * max_scale)`` and summed; the sum is scaled by
``2 * max_scale / (2**20 * output_scale)``; TFLM's
QuantizeMultiplierSmallerThanOneExp needs each factor in (0, 1).  MUL: the
product of the offset inputs is scaled by ``scale_1 * scale_2 / output_scale``.

Shapes broadcast numpy-style; where they differ TFLM's broadcast loops take
at most 6 dimensions for ADD and 4 for MUL.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.errors import Refusal
from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, OpData, Operand, Signature

__all__ = ["ElementwiseData", "SIGNATURE", "ADD_LEFT_SHIFT", "MAX_BROADCAST_RANK", "validate", "analyze"]

SIGNATURE = Signature((Operand("input1", INT8), Operand("input2", INT8)), (Operand("output", INT8),),
                      ("fused_activation",))

#: ADD's input left shift for int8 (15 is int16's).
ADD_LEFT_SHIFT = 20
#: Highest rank TFLM's broadcasting loops handle, per operator.
MAX_BROADCAST_RANK = {"ADD": 6, "MUL": 4}


@dataclass(frozen=True)
class ElementwiseData(OpData):
    """ADD / MUL op data; shifts are TFLM's (positive = left)."""

    out_shape: tuple[int, ...]
    in1_shape: tuple[int, ...]
    in2_shape: tuple[int, ...]
    size: int  # output elements
    input1_offset: int
    input2_offset: int
    output_offset: int
    left_shift: int  # ADD: 20; MUL: 0
    input1_multiplier: int  # MUL: 0
    input1_shift: int
    input2_multiplier: int
    input2_shift: int
    output_multiplier: int
    output_shift: int
    act_min: int
    act_max: int

    @property
    def broadcasts(self) -> bool:
        """Whether the input shapes differ (TFLM's broadcast path)."""
        return self.in1_shape != self.in2_shape

    def broadcast_strides(self, rank: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """``(out_shape, in1_strides, in2_strides)`` right-aligned to ``rank`` dimensions.

        Strides count elements and are 0 along a dimension an input broadcasts.

        :raises Refusal: when the output has more than ``rank`` dimensions.
        """
        if len(self.out_shape) > rank:
            raise Refusal(f"broadcasting over {len(self.out_shape)} dimensions; this kernel takes at most {rank}",
                          op=self)
        out = (1,) * (rank - len(self.out_shape)) + self.out_shape
        return out, c.broadcast_strides(self.in1_shape, out), c.broadcast_strides(self.in2_shape, out)


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, Tensor, tuple[int, ...]]:
    (in1, in2), _, out = c.operands(graph, op, 2)
    s1, s2 = tuple(int(d) for d in in1.shape), tuple(int(d) for d in in2.shape)
    try:
        shape = tuple(int(d) for d in np.broadcast_shapes(s1, s2))
    except ValueError:
        raise c.malformed(op, f"input shapes {list(s1)} and {list(s2)} do not broadcast") from None
    c.check_shape(op, out, shape, "output")
    return in1, in2, out, shape


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, broadcast-compatible inputs, the output shape."""
    _parts(graph, op)


def _smaller_than_one(op: Operator, real: float, what: str) -> tuple[int, int]:
    # QuantizeMultiplierSmallerThanOneExp: TFLM aborts outside (0, 1).
    if not 0.0 < real < 1.0:
        raise c.refuse(op, f"{what} rescale factor {real} must be in (0, 1) for TFLM's int8 ADD")
    return c.multiplier(op, real)


def analyze(graph: Graph, op: Operator) -> ElementwiseData:
    """TFLM's Prepare for ADD or MUL."""
    in1, in2, out, shape = _parts(graph, op)
    limit = MAX_BROADCAST_RANK.get(op.type, 4)
    if tuple(in1.shape) != tuple(in2.shape) and len(shape) > limit:
        raise c.refuse(op, f"broadcasting is limited to {limit} dimensions, the output has {len(shape)}")
    s1, z1 = c.per_tensor_int8(op, in1, "input1")
    s2, z2 = c.per_tensor_int8(op, in2, "input2")
    so, zo = c.per_tensor_int8(op, out, "output")
    act_min, act_max = c.activation_range(op, op.options.get("fused_activation", "NONE"), so, zo)
    if op.type == "ADD":
        twice_max = 2.0 * max(s1, s2)
        m1, sh1 = _smaller_than_one(op, s1 / twice_max, "input1")
        m2, sh2 = _smaller_than_one(op, s2 / twice_max, "input2")
        mo, sho = _smaller_than_one(op, twice_max / ((1 << ADD_LEFT_SHIFT) * so), "output")
        left_shift = ADD_LEFT_SHIFT
    else:
        m1 = sh1 = m2 = sh2 = left_shift = 0
        mo, sho = c.multiplier(op, s1 * s2 / so)
    return ElementwiseData(
        op_index=op.index, op_type=op.type, out_shape=shape, in1_shape=tuple(int(d) for d in in1.shape),
        in2_shape=tuple(int(d) for d in in2.shape), size=c.count(shape), input1_offset=-z1, input2_offset=-z2,
        output_offset=zo, left_shift=left_shift, input1_multiplier=m1, input1_shift=sh1, input2_multiplier=m2,
        input2_shift=sh2, output_multiplier=mo, output_shift=sho, act_min=act_min, act_max=act_max)
