"""PAD, int8: TFLM's pad Prepare.  Values are moved, not rescaled, and the
padding is filled with the output zero point."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.aot.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, SHAPE_TYPES, OpData, Operand, Signature

__all__ = ["PadData", "SIGNATURE", "MAX_RANK", "validate", "analyze"]

SIGNATURE = Signature((Operand("input", INT8), Operand("paddings", SHAPE_TYPES, constant=True)),
                      (Operand("output", INT8),))

#: TFLM's PadParams hold five dimensions.
MAX_RANK = 5


@dataclass(frozen=True)
class PadData(OpData):
    """PAD op data: ``(before, after)`` per dimension, and the fill value."""

    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]
    paddings: tuple[tuple[int, int], ...]
    pad_value: int  # the output zero point


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, tuple[tuple[int, int], ...]]:
    (inp, pads), _, out = c.operands(graph, op, 2)
    rank = len(inp.shape)
    if pads.data is None or tuple(pads.shape) != (rank, 2):
        raise c.malformed(op, f"paddings tensor {pads.index} must be a constant of shape [{rank}, 2]")
    paddings = tuple((int(a), int(b)) for a, b in np.asarray(pads.data).reshape(rank, 2))
    if any(a < 0 or b < 0 for a, b in paddings):
        raise c.malformed(op, f"negative paddings {paddings}")
    c.check_shape(op, out, [int(d) + a + b for d, (a, b) in zip(inp.shape, paddings)], "output")
    return inp, out, paddings


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, a constant ``[rank, 2]`` paddings tensor, the padded output shape."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> PadData:
    """PAD's op data; at most 5 dimensions, input and output quantized alike."""
    inp, out, paddings = _parts(graph, op)
    if len(inp.shape) > MAX_RANK:
        raise c.refuse(op, f"PAD supports up to {MAX_RANK} dimensions, the input has {len(inp.shape)}")
    c.same_quantization(op, inp, out)
    _, out_zp = c.per_tensor_int8(op, out, "output")
    return PadData(op_index=op.index, op_type=op.type, in_shape=tuple(int(d) for d in inp.shape),
                   out_shape=tuple(int(d) for d in out.shape), paddings=paddings, pad_value=out_zp)
