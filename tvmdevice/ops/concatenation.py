"""CONCATENATION, int8 and int16, on any axis: TFLM's concatenation Prepare.

TFLM copies the raw int8 values; inputs quantized unlike the output would be
silently reinterpreted, so they are refused (the rule of the kernels that do
not rescale, :func:`~tvmdevice.ops._checks.same_quantization`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops import _movement as m
from tvmdevice.ops._base import OpData, Operand, Signature

__all__ = ["ConcatData", "SIGNATURE", "MAX_INPUTS", "MAX_RANK", "validate", "analyze"]

SIGNATURE = Signature((Operand("input", m.MOVABLE),), (Operand("output", m.MOVABLE),), ("axis", "fused_activation"),
                      variadic=True)

#: TFLM's kMaxInputNum.
MAX_INPUTS = 10
#: TFLM's static allocation stops at 4-D shapes.
MAX_RANK = 4


@dataclass(frozen=True)
class ConcatData(OpData):
    """CONCATENATION op data: each input is ``outer_size`` blocks of ``copy_sizes[i]`` elements."""

    axis: int  # non-negative
    inputs_count: int
    outer_size: int
    copy_sizes: tuple[int, ...]


def _parts(graph: Graph, op: Operator) -> tuple[list[Tensor], Tensor, int]:
    first, rest, out = c.operands(graph, op, 1, max(len(op.inputs) - 1, 0))
    if any(t is None for t in rest):
        raise c.malformed(op, "an input is absent")
    ins = first + [t for t in rest if t is not None]
    rank = len(out.shape)
    if rank > MAX_RANK or rank == 0:
        raise c.refuse(op, f"CONCATENATION supports 1 to {MAX_RANK} dimensions, the output has {rank}")
    raw = op.options.get("axis", 0)
    axis = int(raw) + rank if int(raw) < 0 else int(raw)
    if not 0 <= axis < rank:
        raise c.malformed(op, f"axis {raw} is out of range for rank {rank}")
    for t in ins:
        if len(t.shape) != rank or any(t.shape[k] != out.shape[k] for k in range(rank) if k != axis):
            raise c.malformed(op, f"input tensor {t.index} shape {list(t.shape)} does not fit output "
                                  f"{list(out.shape)} along axis {axis}")
    if sum(int(t.shape[axis]) for t in ins) != int(out.shape[axis]):
        raise c.malformed(op, f"input sizes along axis {axis} do not add up to {out.shape[axis]}")
    return ins, out, axis


def validate(graph: Graph, op: Operator) -> None:
    """Operands present, the axis in range, input shapes that stack into the output."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> ConcatData:
    """CONCATENATION's op data: at most 10 inputs, no fused activation, no rescaling."""
    ins, out, axis = _parts(graph, op)
    if len(ins) > MAX_INPUTS:
        raise c.refuse(op, f"{len(ins)} inputs; TFLM concatenates at most {MAX_INPUTS}")
    if op.options.get("fused_activation", "NONE") != "NONE":
        raise c.refuse(op, "a fused activation on CONCATENATION is not supported (TFLM refuses it)")
    for t in ins:
        m.same_quantization(op, t, out)
        m.identical_quantization(op, t, out, "concatenation.cc")
    return ConcatData(op_index=op.index, op_type=op.type, axis=axis, inputs_count=len(ins),
                      outer_size=c.count(out.shape[:axis]), copy_sizes=tuple(c.count(t.shape[axis:]) for t in ins))
