"""LOGISTIC and TANH on int16: TFLM's Prepare (``logistic_common.cc``, ``tanh_common.cc``).

TFLM's int16 kernels read a 256-entry table of sigmoid(i / 24) in unsigned
Q0.16 (tanh through tanh(x) = 2 sigmoid(2x) - 1), interpolating between
entries; the table is TFLM's constant (its values are not a rounding of the
formula), kept by the kernels.  The input is rescaled to 3 * 4096 steps per unit: with a
power-of-two input scale that is an exact shift (``input_multiplier`` 0:
``3 << input_left_shift``), otherwise ``input_multiplier`` (at most 32767)
and a rounding right shift.  Zero points are 0; the output scale is 2**-15.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import _checks as c
from tvmdevice.ops import activations as base
from tvmdevice.ops._base import OpData
from tvmdevice.ops.int16 import _checks as c16
from tvmdevice.quantization import round_half_away

__all__ = ["Activation16Data", "checked_log2", "analyze"]

_INPUT_INTEGER_BITS = 3
_OUTPUT_FRACTIONAL_BITS = 15
#: Input left shifts that TFLM treats as an exact power-of-two rescale, per operator.
_POT_SHIFTS = {"LOGISTIC": (0,), "TANH": (0, 1)}


@dataclass(frozen=True, eq=False)
class Activation16Data(OpData):
    """LOGISTIC / TANH op data on int16 (TFLM's OpDataLogistic / OpDataTanh members)."""

    size: int
    input_multiplier: int  # 0: power-of-two input scale, the kernel multiplies by 3 << input_left_shift
    input_left_shift: int  # a right shift after the multiplication (unless input_multiplier is 0)
    variant: ClassVar[str] = "int16"


def checked_log2(x: float) -> tuple[bool, int]:
    """TFLM's CheckedLog2 in float32: (whether ``x`` is a power of two within 1e-3 in log2, the rounded log2)."""
    f = np.float32
    log2 = f(np.log(f(x))) * (f(1) / f(np.log(f(2))))
    rounded = f(round_half_away(float(log2)))
    return bool(abs(log2 - rounded) < f(1e-3)), int(rounded)


def analyze(graph: Graph, op: Operator) -> Activation16Data:
    """LOGISTIC's or TANH's op data on int16."""
    inp, out = base._parts(graph, op)
    if c16.dtype_name(out) != "int16":
        raise c.refuse(op, f"int16 {op.type} needs an int16 output, got {c16.dtype_name(out)}")
    in_scale = c16.symmetric(op, inp, "input")
    out_scale = c16.symmetric(op, out, "output")
    pot, out_log2 = checked_log2(out_scale)
    if not pot or out_log2 != -_OUTPUT_FRACTIONAL_BITS:
        raise c.refuse(op, f"int16 {op.type} needs output scale 2**-15 (got {out_scale})")
    pot, in_log2 = checked_log2(in_scale)
    left_shift = (15 - _INPUT_INTEGER_BITS) + in_log2
    if pot and left_shift in _POT_SHIFTS[op.type]:
        multiplier = 0
    else:
        real, left_shift = in_scale * 4096.0 * 3.0, 0
        while real <= 32767.0 / 2.0 and left_shift <= 30:
            left_shift += 1
            real *= 2.0
        multiplier = int(real)
        if multiplier > 32767:
            raise c.refuse(op, f"input scale {in_scale} is too large for TFLM's int16 {op.type} "
                               f"(multiplier {multiplier} > 32767)")
    return Activation16Data(op_index=op.index, op_type=op.type, size=c.count(out.shape), input_multiplier=multiplier,
                            input_left_shift=left_shift)
