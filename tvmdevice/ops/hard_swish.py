"""HARD_SWISH, int8: TFLM's HardSwishPrepare (``hard_swish_common.cc``).

The input minus its zero point, times 128 ("hires" scale ``input_scale /
128``), is rescaled two ways with int16 fixed-point multipliers: to the
output scale, and to the "reluish" scale on which 3.0 is 32768.  Both Q31
multipliers come from QuantizeMultiplier and are rounded to Q15
(DownScaleInt32ToInt16Multiplier).  TFLM requires the output exponent to be
<= 0; the int16 rounding shifts here take at most 15 bits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, OpData, Operand, Signature
from tvmdevice.ops.activations import _parts  # one input, one output of the same shape
from tvmdevice.quantization import quantize_multiplier

__all__ = ["HardSwishData", "SIGNATURE", "validate", "analyze"]

SIGNATURE = Signature((Operand("input", INT8),), (Operand("output", INT8),))

_RELUISH_SCALE = np.float32(3.0 / 32768.0)


@dataclass(frozen=True)
class HardSwishData(OpData):
    """HARD_SWISH op data (TFLM's HardSwishParams member names)."""

    size: int
    input_zero_point: int
    output_zero_point: int
    reluish_multiplier_fixedpoint_int16: int
    reluish_multiplier_exponent: int
    output_multiplier_fixedpoint_int16: int
    output_multiplier_exponent: int


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts and equal input and output shapes."""
    _parts(graph, op)


def _int16_multiplier(m32: int) -> int:
    # DownScaleInt32ToInt16Multiplier: round the Q31 multiplier to Q15, saturating.
    if m32 >= c.INT32_MAX - (1 << 15):
        return 32767
    return (m32 + (1 << 15)) >> 16


def analyze(graph: Graph, op: Operator) -> HardSwishData:
    """TFLM's HardSwishPrepare for int8."""
    inp, out = _parts(graph, op)
    s_in, z_in = c.per_tensor_int8(op, inp, "input")
    s_out, z_out = c.per_tensor_int8(op, out, "output")
    hires = np.float32(1.0 / 128.0) * np.float32(s_in)  # float32, as TFLM
    out_m, out_e = quantize_multiplier(float(hires / np.float32(s_out)))
    relu_m, relu_e = quantize_multiplier(float(hires / _RELUISH_SCALE))
    if not -15 <= out_e <= 0:
        raise c.refuse(op, f"output multiplier exponent {out_e} must be in [-15, 0] (input scale {s_in} is too large "
                           f"for output scale {s_out})")
    if not -15 <= relu_e <= 30:
        raise c.refuse(op, f"input scale {s_in} gives a reluish exponent {relu_e} outside [-15, 30]")
    return HardSwishData(op_index=op.index, op_type=op.type, size=c.count(inp.shape), input_zero_point=z_in,
                         output_zero_point=z_out, reluish_multiplier_fixedpoint_int16=_int16_multiplier(relu_m),
                         reluish_multiplier_exponent=relu_e,
                         output_multiplier_fixedpoint_int16=_int16_multiplier(out_m),
                         output_multiplier_exponent=out_e)
