"""RESHAPE: a view.  The output aliases the input; no kernel computes anything.

TFLM's int8 RESHAPE copies the raw bytes; a model whose input and output
quantization differ would be silently reinterpreted, so it is refused (the
rule of the kernels that do not rescale, :func:`~tvmdevice.ops._checks.same_quantization`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, SHAPE_TYPES, OpData, Operand, Signature

__all__ = ["ViewData", "RESHAPE_SIGNATURE", "validate", "analyze"]

# The shape operand is optional and need not be constant: the output
# tensor's shape is authoritative.
RESHAPE_SIGNATURE = Signature((Operand("input", INT8), Operand("shape", SHAPE_TYPES, optional=True)),
                              (Operand("output", INT8),), ("new_shape",))


@dataclass(frozen=True)
class ViewData(OpData):
    """A view operator: the output is the input's bytes under another shape."""

    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]
    size: int  # elements

    @property
    def is_view(self) -> bool:
        return True


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor]:
    (inp,), _, out = c.operands(graph, op, 1, 1)
    n_in, n_out = c.count(inp.shape), c.count(out.shape)
    if n_in != n_out:
        raise c.malformed(op, f"cannot reshape {list(inp.shape)} ({n_in} elements) to {list(out.shape)}")
    if inp.dtype != out.dtype:
        raise c.malformed(op, f"input is {inp.dtype} but output is {out.dtype}")
    return inp, out


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, equal element counts and dtypes."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> ViewData:
    """The view's shapes; input and output must share quantization."""
    inp, out = _parts(graph, op)
    c.same_quantization(op, inp, out)
    return ViewData(op_index=op.index, op_type=op.type, in_shape=tuple(int(d) for d in inp.shape),
                    out_shape=tuple(int(d) for d in out.shape), size=c.count(out.shape))
