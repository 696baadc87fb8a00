"""SQUEEZE and EXPAND_DIMS: views, like RESHAPE.

The output is the input's bytes under a shape with size-1 dimensions
removed or inserted; TFLM's ``squeeze.cc`` and ``expand_dims.cc`` check the
output shape, which is all there is to do.  A view of a computed tensor
aliases it (no kernel); a constant's is copied by the host.
"""

from __future__ import annotations

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops import _movement as m
from tvmdevice.ops._base import INT32, SHAPE_TYPES, Operand, Signature
from tvmdevice.ops.views import ViewData

__all__ = ["SQUEEZE_SIGNATURE", "EXPAND_DIMS_SIGNATURE", "validate", "analyze"]

SQUEEZE_SIGNATURE = Signature((Operand("input", m.MOVABLE),), (Operand("output", m.MOVABLE),), ("squeeze_dims",))
EXPAND_DIMS_SIGNATURE = Signature((Operand("input", m.MOVABLE), Operand("axis", INT32 | SHAPE_TYPES, constant=True)),
                                  (Operand("output", m.MOVABLE),))

#: TFLM's SQUEEZE takes at most 8 dimensions.
MAX_SQUEEZE_RANK = 8


def _expected(graph: Graph, op: Operator, inp: Tensor, axis_t: Tensor | None) -> tuple[int, ...]:
    shape = m.dims(inp)
    if op.type == "EXPAND_DIMS":
        if axis_t is not None and len(axis_t.shape) > 1:  # TFLM's expand_dims.cc: a scalar or 1-D axis
            raise c.malformed(op, f"axis tensor {axis_t.index} has {len(axis_t.shape)} dimensions; "
                                  "EXPAND_DIMS takes a scalar or a 1-D axis")
        ax = m.constant_ints(op, axis_t, "axis", 1)[0]
        ax = m.axis(op, ax, len(shape) + 1)
        return shape[:ax] + (1,) + shape[ax:]
    raw = op.options.get("squeeze_dims") or ()
    if not raw:  # every size-1 dimension
        return tuple(d for d in shape if d != 1)
    axes = {m.axis(op, int(a), len(shape), "squeeze dimension") for a in raw}
    for a in axes:
        if shape[a] != 1:
            raise c.malformed(op, f"cannot squeeze dimension {a} of size {shape[a]}")
    return tuple(d for k, d in enumerate(shape) if k not in axes)


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor]:
    n_in = 2 if op.type == "EXPAND_DIMS" else 1
    ins, _, out = c.operands(graph, op, n_in)
    inp = ins[0]
    if len(inp.shape) > MAX_SQUEEZE_RANK:
        raise c.malformed(op, f"the input has {len(inp.shape)} dimensions, more than {MAX_SQUEEZE_RANK}")
    c.check_shape(op, out, _expected(graph, op, inp, ins[1] if n_in == 2 else None), "output")
    return inp, out


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, a constant axis, the output shape."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> ViewData:
    """The view's shapes; input and output must share type and quantization."""
    inp, out = _parts(graph, op)
    m.same_quantization(op, inp, out)
    return ViewData(op_index=op.index, op_type=op.type, in_shape=m.dims(inp), out_shape=m.dims(out),
                    size=c.count(out.shape))
