"""SUB (int8, int16), int16 ADD and MUL: TFLM's Prepare (``sub_common.cc``, ``add_common.cc``, ``mul_common.cc``).

* ADD and SUB rescale both inputs to a common scale after shifting them left
  by 20 bits (int8) or 15 (int16), then rescale the sum or difference to the
  output; the factors are computed in double from the float32 scales (newer
  TFLM sources compute SUB's in float32; the tflite-micro build the tests run
  against, and so this layer, use double).
* MUL int16 is MUL int8's formula with int16 clamps; TFLM requires every zero
  point to be 0 for it.

The op data is :class:`~tvmdevice.ops.elementwise.ElementwiseData`; the int16
variant is :class:`Elementwise16Data`.  Broadcasting: TFLM's SUB and ADD loop
over at most 6 dimensions, MUL 4.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import _checks as c
from tvmdevice.ops import elementwise as base
from tvmdevice.ops._base import INT8, INT16, Operand, Signature
from tvmdevice.ops.int16 import _checks as c16

__all__ = ["Elementwise16Data", "SUB_SIGNATURE", "LEFT_SHIFT", "MAX_BROADCAST_RANK", "analyze"]

SUB_SIGNATURE = Signature((Operand("input1", INT8 | INT16), Operand("input2", INT8 | INT16)),
                          (Operand("output", INT8 | INT16),), ("fused_activation",))

#: ADD's and SUB's input left shift by data type.
LEFT_SHIFT = {"int8": 20, "int16": 15}
#: Highest rank TFLM's broadcasting loops handle, per operator.
MAX_BROADCAST_RANK = {"ADD": 6, "SUB": 6, "MUL": 4}


@dataclass(frozen=True)
class Elementwise16Data(base.ElementwiseData):
    """ADD / SUB / MUL op data on int16 tensors (clamps in the int16 range)."""

    variant: ClassVar[str] = "int16"


def _factors(op: Operator, s1: float, s2: float, so: float, left_shift: int) -> tuple[int, ...]:
    # CalculateOpDataAdd / CalculateOpDataSub: double arithmetic on the float32 scales.
    twice_max = 2.0 * max(s1, s2)
    return (*base._smaller_than_one(op, s1 / twice_max, "input1"),
            *base._smaller_than_one(op, s2 / twice_max, "input2"),
            *base._smaller_than_one(op, twice_max / ((1 << left_shift) * so), "output"))


def analyze(graph: Graph, op: Operator) -> base.ElementwiseData:
    """TFLM's Prepare for SUB (int8, int16) and for int16 ADD and MUL."""
    in1, in2, out, shape = base._parts(graph, op)
    dtype = c16.dtype_name(in1)
    if dtype not in ("int8", "int16") or {c16.dtype_name(in2), c16.dtype_name(out)} != {dtype}:
        raise c.refuse(op, f"{op.type} needs int8 or int16 inputs and output of one type, got "
                           f"{c16.dtype_name(in1)}, {c16.dtype_name(in2)} -> {c16.dtype_name(out)}")
    limit = MAX_BROADCAST_RANK[op.type]
    if tuple(in1.shape) != tuple(in2.shape) and len(shape) > limit:
        raise c.refuse(op, f"broadcasting is limited to {limit} dimensions, the output has {len(shape)}")
    s1, z1 = c16.per_tensor(op, in1, "input1", dtype)
    s2, z2 = c16.per_tensor(op, in2, "input2", dtype)
    so, zo = c16.per_tensor(op, out, "output", dtype)
    if dtype == "int16":
        act_min, act_max = c16.activation_range16(op, so, zo)
    else:
        act_min, act_max = c.activation_range(op, op.options.get("fused_activation", "NONE"), so, zo)
    if op.type == "MUL":
        if dtype == "int16" and (z1, z2, zo) != (0, 0, 0):
            raise c.refuse(op, f"int16 MUL needs zero points of 0 (got {z1}, {z2}, {zo})")
        m1 = sh1 = m2 = sh2 = left_shift = 0
        mo, sho = c.multiplier(op, s1 * s2 / so)
    else:
        left_shift = LEFT_SHIFT[dtype]
        m1, sh1, m2, sh2, mo, sho = _factors(op, s1, s2, so, left_shift)
    cls = Elementwise16Data if dtype == "int16" else base.ElementwiseData
    return cls(
        op_index=op.index, op_type=op.type, out_shape=shape, in1_shape=tuple(int(d) for d in in1.shape),
        in2_shape=tuple(int(d) for d in in2.shape), size=c.count(shape), input1_offset=-z1, input2_offset=-z2,
        output_offset=zo, left_shift=left_shift, input1_multiplier=m1, input1_shift=sh1, input2_multiplier=m2,
        input2_shift=sh2, output_multiplier=mo, output_shift=sho, act_min=act_min, act_max=act_max)
