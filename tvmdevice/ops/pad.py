"""PAD and PADV2, int8 and int16: TFLM's pad Prepare.  Values are moved, not
rescaled.  The padding holds PADV2's ``constant_values`` (its raw value, as
TFLM reads it), else the output zero point for int8 and 0 for int16 (TFLM's
int16 PAD fills with 0 whatever the zero point)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops import _movement as mv
from tvmdevice.ops._base import SHAPE_TYPES, OpData, Operand, Signature

__all__ = ["PadData", "SIGNATURE", "PADV2_SIGNATURE", "MAX_RANK", "validate", "analyze"]

SIGNATURE = Signature((Operand("input", mv.MOVABLE), Operand("paddings", SHAPE_TYPES, constant=True)),
                      (Operand("output", mv.MOVABLE),))
# TFLM reads constant_values at every run; tvmdevice folds it, so it must be a constant.
PADV2_SIGNATURE = Signature((Operand("input", mv.MOVABLE), Operand("paddings", SHAPE_TYPES, constant=True),
                             Operand("constant_values", mv.MOVABLE, constant=True, optional=True)),
                            (Operand("output", mv.MOVABLE),))

#: TFLM's PadParams hold five dimensions.
MAX_RANK = 5


@dataclass(frozen=True)
class PadData(OpData):
    """PAD op data: ``(before, after)`` per dimension, and the fill value."""

    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]
    paddings: tuple[tuple[int, int], ...]
    pad_value: int  # constant_values, else the int8 output zero point (int16: 0)
    itemsize: int = 1


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, tuple[tuple[int, int], ...]]:
    (inp, pads), _, out = c.operands(graph, op, 2, 1 if op.type == "PADV2" else 0)
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
        raise c.refuse(op, f"{op.type} supports up to {MAX_RANK} dimensions, the input has {len(inp.shape)}")
    mv.same_quantization(op, inp, out)
    value = _constant_value(graph, op, inp)
    if value is None:
        value = int(out.quant.zero_point[0]) if np.dtype(out.dtype) == np.int8 and out.quant is not None else 0
    return PadData(op_index=op.index, op_type=op.type, in_shape=tuple(int(d) for d in inp.shape),
                   out_shape=tuple(int(d) for d in out.shape), paddings=paddings, pad_value=value,
                   itemsize=np.dtype(inp.dtype).itemsize)


def _constant_value(graph: Graph, op: Operator, inp: Tensor) -> int | None:
    """PADV2's constant_values, read raw as TFLM does (so it must be quantized like the output)."""
    if op.type != "PADV2" or len(op.inputs) < 3 or op.inputs[2] < 0:
        return None
    t = graph.tensors[op.inputs[2]]
    if np.dtype(t.dtype) != np.dtype(inp.dtype) or c.count(t.shape) != 1:
        raise c.malformed(op, f"constant_values tensor {t.index} must be one {np.dtype(inp.dtype).name} value")
    mv.same_quantization(op, t, inp)
    mv.identical_quantization(op, t, graph.tensors[op.outputs[0]], "pad_common.cc (PADV2's constant)")
    return int(mv.constant_ints(op, t, "constant_values", 1)[0])
