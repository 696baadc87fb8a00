"""QUANTIZE (float32 -> int8, int8 -> int8) and DEQUANTIZE (int8 -> float32): TFLM's Prepare.

* float32 -> int8 is AffineQuantize with the output's float32 scale and zero point;
* int8 -> int8 is Requantize by ``input_scale / output_scale``;
* DEQUANTIZE is ``float(scale) * (q - zero_point)`` in float32.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import FLOAT32, INT8, OpData, Operand, Signature

__all__ = ["QuantizeData", "DequantizeData", "QUANTIZE_SIGNATURE", "DEQUANTIZE_SIGNATURE", "validate",
           "analyze"]

QUANTIZE_SIGNATURE = Signature((Operand("input", FLOAT32 | INT8),), (Operand("output", INT8),))
DEQUANTIZE_SIGNATURE = Signature((Operand("input", INT8),), (Operand("output", FLOAT32),))


@dataclass(frozen=True)
class QuantizeData(OpData):
    """QUANTIZE op data.  From float32: ``output_scale``/``output_offset`` only
    (``input_offset``, ``multiplier``, ``shift`` are 0); from int8: a requantization."""

    from_float: bool
    size: int
    output_scale: float  # the float32 scale, widened exactly
    output_offset: int
    input_offset: int
    multiplier: int
    shift: int


@dataclass(frozen=True)
class DequantizeData(OpData):
    """DEQUANTIZE op data: ``output = scale * (input - zero_point)`` in float32."""

    size: int
    scale: float  # the float32 scale, widened exactly
    zero_point: int


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor]:
    (inp,), _, out = c.operands(graph, op, 1)
    if tuple(inp.shape) != tuple(out.shape):
        raise c.malformed(op, f"input shape {list(inp.shape)} and output shape {list(out.shape)} must match")
    return inp, out


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts and equal input and output shapes."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> QuantizeData | DequantizeData:
    """QUANTIZE's or DEQUANTIZE's op data."""
    inp, out = _parts(graph, op)
    size = c.count(out.shape)
    if op.type == "DEQUANTIZE":
        scale, zp = c.per_tensor_int8(op, inp, "input")
        if np.dtype(out.dtype) != np.float32:
            raise c.refuse(op, f"output tensor {out.index} is {np.dtype(out.dtype).name}; float32 is required")
        return DequantizeData(op_index=op.index, op_type=op.type, size=size, scale=scale, zero_point=zp)
    out_scale, out_zp = c.per_tensor_int8(op, out, "output")
    if np.dtype(inp.dtype) == np.float32:
        return QuantizeData(op_index=op.index, op_type=op.type, from_float=True, size=size, output_scale=out_scale,
                            output_offset=out_zp, input_offset=0, multiplier=0, shift=0)
    in_scale, in_zp = c.per_tensor_int8(op, inp, "input")
    multiplier, shift = c.multiplier(op, in_scale / out_scale)
    return QuantizeData(op_index=op.index, op_type=op.type, from_float=False, size=size, output_scale=out_scale,
                        output_offset=out_zp, input_offset=-in_zp, multiplier=multiplier, shift=shift)
