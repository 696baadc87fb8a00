"""QUANTIZE to or from int16: TFLM's PrepareQuantizeReference (``quantize_common.cc``).

* float32 -> int16 is AffineQuantize with the output's float32 scale and zero point;
* int8 -> int16, int16 -> int8, int16 -> int16 and int16 -> int32 are Requantize by
  ``input_scale / output_scale`` (double), clamped to the output type (int32: the
  sum with the output zero point wraps, as TFLM's int32 arithmetic does).

The op data is :class:`~tvmdevice.ops.quantize.QuantizeData`'s, with the two
data types named: the variant is ``"<input>-><output>"``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops import quantize as base
from tvmdevice.ops.int16 import _checks as c16

__all__ = ["Quantize16Data", "VARIANTS", "analyze"]

#: The (input, output) data types this module prepares.
VARIANTS = frozenset({("float32", "int16"), ("int8", "int16"), ("int16", "int8"), ("int16", "int16"),
                      ("int16", "int32")})


@dataclass(frozen=True)
class Quantize16Data(base.QuantizeData):
    """QUANTIZE op data with an int16 input or output."""

    input_dtype: str = "int16"
    output_dtype: str = "int16"

    @property
    def variant(self) -> str:  # type: ignore[override]
        return f"{self.input_dtype}->{self.output_dtype}"


def analyze(graph: Graph, op: Operator) -> Quantize16Data:
    """QUANTIZE's op data for the int16 variants."""
    inp, out = base._parts(graph, op)
    pair = (c16.dtype_name(inp), c16.dtype_name(out))
    if pair not in VARIANTS:
        raise c.refuse(op, f"QUANTIZE {pair[0]} -> {pair[1]} is not supported (TFLM's int16 variants: "
                           f"{', '.join(f'{a} -> {b}' for a, b in sorted(VARIANTS))})")
    size = c.count(out.shape)
    out_scale, out_zp = (_per_tensor32(op, out) if pair[1] == "int32" else c16.per_tensor(op, out, "output", pair[1]))
    if pair[0] == "float32":
        return Quantize16Data(op_index=op.index, op_type=op.type, from_float=True, size=size, output_scale=out_scale,
                              output_offset=out_zp, input_offset=0, multiplier=0, shift=0, input_dtype=pair[0],
                              output_dtype=pair[1])
    in_scale, in_zp = c16.per_tensor(op, inp, "input", pair[0])
    multiplier, shift = c.multiplier(op, in_scale / out_scale)
    return Quantize16Data(op_index=op.index, op_type=op.type, from_float=False, size=size, output_scale=out_scale,
                          output_offset=out_zp, input_offset=-in_zp, multiplier=multiplier, shift=shift,
                          input_dtype=pair[0], output_dtype=pair[1])


def _per_tensor32(op: Operator, t: Tensor) -> tuple[float, int]:
    """``(scale, zero_point)`` of a per-tensor quantized int32 output (TFLM takes any int32 zero point)."""
    q = t.quant
    if q is None or q.scale.size == 0:
        raise c.refuse(op, f"output tensor {t.index} is not quantized")
    if q.scale.size != 1:
        raise c.refuse(op, f"output tensor {t.index} is per-channel quantized; only weights may be")
    return float(np.float32(q.scale[0])), int(q.zero_point[0])
