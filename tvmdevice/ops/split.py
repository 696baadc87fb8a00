"""SPLIT, SPLIT_V and UNPACK (one input, several outputs) and PACK (several inputs, one output).

TFLM's ``split.cc``, ``split_v.cc``, ``unpack.cc`` and ``pack.cc``: the
input is ``outer_size`` blocks; each block holds, in output order, one block
of ``copy_sizes[i]`` elements per output (PACK the reverse: the
concatenation of its inputs along a new axis, :class:`~tvmdevice.ops.ConcatData`).
Values are moved, never rescaled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops import _movement as m
from tvmdevice.ops._base import INT32, SHAPE_TYPES, OpData, Operand, Signature
from tvmdevice.ops.concatenation import ConcatData

__all__ = ["SplitData", "SPLIT_SIGNATURE", "SPLIT_V_SIGNATURE", "UNPACK_SIGNATURE", "PACK_SIGNATURE", "validate",
           "analyze"]

SPLIT_SIGNATURE = Signature((Operand("axis", INT32, constant=True), Operand("input", m.MOVABLE)),
                            (Operand("output", m.MOVABLE),), ("num_splits",), variadic_outputs=True)
SPLIT_V_SIGNATURE = Signature((Operand("input", m.MOVABLE), Operand("size_splits", SHAPE_TYPES, constant=True),
                               Operand("axis", INT32, constant=True)),
                              (Operand("output", m.MOVABLE),), ("num_splits",), variadic_outputs=True)
UNPACK_SIGNATURE = Signature((Operand("input", m.MOVABLE),), (Operand("output", m.MOVABLE),), ("num", "axis"),
                             variadic_outputs=True)
PACK_SIGNATURE = Signature((Operand("input", m.MOVABLE),), (Operand("output", m.MOVABLE),), ("values_count", "axis"),
                           variadic=True)

#: The position of the data input among each operator's inputs.
_DATA_INPUT = {"SPLIT": 1, "SPLIT_V": 0, "UNPACK": 0}


@dataclass(frozen=True)
class SplitData(OpData):
    """SPLIT/SPLIT_V/UNPACK op data: ``outer_size`` input blocks, each cut into one block per output.

    :ivar input_index: the position of the data input among the operator's inputs.
    :ivar copy_sizes: elements per block of each output, in output order.
    :ivar itemsize: bytes per element.
    """

    axis: int
    input_index: int
    outer_size: int
    copy_sizes: tuple[int, ...]
    itemsize: int


def _count_option(op: Operator, name: str, count: int, role: str) -> None:
    # TFLM's pack.cc and unpack.cc loop over the option's count, not the operands (an
    # option that disagrees leaves outputs unwritten); LiteRT's prepare requires them equal.
    value = int(op.options.get(name, count))
    if value != count:
        raise c.malformed(op, f"option {name} is {value} but the operator has {count} {role}")


def _split_parts(graph: Graph, op: Operator) -> tuple[Tensor, list[Tensor], SplitData]:
    n_in = {"SPLIT": 2, "SPLIT_V": 3, "UNPACK": 1}[op.type]
    if len(op.inputs) != n_in:
        raise c.malformed(op, f"has {len(op.inputs)} inputs; expected {n_in}")
    if any(i < 0 or i >= len(graph.tensors) for i in op.inputs):
        raise c.malformed(op, "an input is absent or out of range")
    ins = [graph.tensors[i] for i in op.inputs]
    outs = m.outputs(graph, op)
    inp = ins[_DATA_INPUT[op.type]]
    shape = m.dims(inp)
    rank = len(shape)
    if op.type == "UNPACK":
        _count_option(op, "num", len(outs), "outputs")
        ax = m.axis(op, int(op.options.get("axis", 0)), rank)
        if len(outs) != shape[ax]:
            raise c.malformed(op, f"unpacks {shape[ax]} slices along axis {ax} into {len(outs)} outputs")
        expected = [shape[:ax] + shape[ax + 1:]] * len(outs)
        sizes = [1] * len(outs)
    else:
        axis_t = ins[0] if op.type == "SPLIT" else ins[2]
        ax = m.axis(op, m.constant_ints(op, axis_t, "axis", 1)[0], rank)
        if op.type == "SPLIT":
            if shape[ax] % len(outs):
                raise c.malformed(op, f"cannot split dimension {shape[ax]} into {len(outs)} equal parts")
            sizes = [shape[ax] // len(outs)] * len(outs)
        else:
            sizes = list(m.constant_ints(op, ins[1], "size_splits", len(outs)))
            unknown = [k for k, s in enumerate(sizes) if s == -1]
            if len(unknown) > 1 or any(s < -1 for s in sizes):
                raise c.malformed(op, f"size_splits {sizes} has negative sizes or more than one -1")
            if unknown:
                sizes[unknown[0]] = shape[ax] - (sum(sizes) + 1)
            if sum(sizes) != shape[ax] or any(s <= 0 for s in sizes):
                raise c.malformed(op, f"size_splits {sizes} do not add up to dimension {shape[ax]}")
        expected = [shape[:ax] + (s,) + shape[ax + 1:] for s in sizes]
    for t, e in zip(outs, expected):
        c.check_shape(op, t, e, "output")
    inner = c.count(shape[ax + 1:])
    data = SplitData(op.index, op.type, ax, _DATA_INPUT[op.type], c.count(shape[:ax]),
                     tuple(s * inner for s in sizes), np.dtype(inp.dtype).itemsize)
    return inp, outs, data


def _pack_parts(graph: Graph, op: Operator) -> tuple[list[Tensor], Tensor, ConcatData]:
    first, rest, out = c.operands(graph, op, 1, max(len(op.inputs) - 1, 0))
    if any(t is None for t in rest):
        raise c.malformed(op, "an input is absent")
    ins = first + [t for t in rest if t is not None]
    _count_option(op, "values_count", len(ins), "inputs")
    shape = m.dims(ins[0])
    ax = m.axis(op, int(op.options.get("axis", 0)), len(shape) + 1)
    for t in ins:
        c.check_shape(op, t, shape, "input")
    c.check_shape(op, out, shape[:ax] + (len(ins),) + shape[ax:], "output")
    data = ConcatData(op.index, op.type, ax, len(ins), c.count(shape[:ax]), (c.count(shape[ax:]),) * len(ins))
    return ins, out, data


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, a constant axis and split sizes, output shapes that tile the input."""
    if op.type == "PACK":
        _pack_parts(graph, op)
    else:
        _split_parts(graph, op)


def analyze(graph: Graph, op: Operator) -> SplitData | ConcatData:
    """The block copies; every output (PACK: every input) quantized like the input (output)."""
    if op.type == "PACK":
        ins, out, concat = _pack_parts(graph, op)
        for t in ins:
            m.same_quantization(op, t, out)
        return concat
    inp, outs, data = _split_parts(graph, op)
    for t in outs:
        m.same_quantization(op, inp, t)
    return data
