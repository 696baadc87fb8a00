"""GATHER, int8: TFLM's ``gather.cc``.

For each batch and outer block, the output holds the input's ``inner_size``
elements at each coordinate along ``axis``.  Coordinates are an int32
tensor; constant ones are checked here, computed ones by the kernel, which
fails on one outside ``[0, axis_size)`` as TFLM's does.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops import _movement as m
from tvmdevice.ops._base import INT8, INT32, OpData, Operand, Signature

__all__ = ["GatherData", "SIGNATURE", "validate", "analyze"]

SIGNATURE = Signature((Operand("input", INT8), Operand("positions", INT32)), (Operand("output", INT8),),
                      ("axis", "batch_dims"))


@dataclass(frozen=True)
class GatherData(OpData):
    """GATHER op data (element counts)."""

    axis: int
    batch_dims: int
    batch_size: int
    outer_size: int
    axis_size: int
    coord_size: int
    inner_size: int


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, Tensor, GatherData]:
    (inp, coords), _, out = c.operands(graph, op, 2)
    shape, cshape = m.dims(inp), m.dims(coords)
    ax = m.axis(op, int(op.options.get("axis", 0)), len(shape))
    batch_dims = int(op.options.get("batch_dims", 0))
    if batch_dims < 0:
        batch_dims += len(cshape)
    # TFLM's GatherPrepare.
    if not (0 <= batch_dims <= ax and batch_dims < len(shape) and batch_dims <= len(cshape)):
        raise c.malformed(op, f"batch_dims {op.options.get('batch_dims')} is out of range for axis {ax}, input "
                              f"rank {len(shape)} and positions rank {len(cshape)}")
    if shape[:batch_dims] != cshape[:batch_dims]:
        raise c.malformed(op, f"the first {batch_dims} dimensions of input {list(shape)} and positions "
                              f"{list(cshape)} differ")
    c.check_shape(op, out, shape[:ax] + cshape[batch_dims:] + shape[ax + 1:], "output")
    if coords.data is not None:
        bad = [int(v) for v in coords.data.reshape(-1) if not 0 <= int(v) < shape[ax]]
        if bad:
            raise c.malformed(op, f"position {bad[0]} is outside [0, {shape[ax]}) (TFLM fails on it)")
    data = GatherData(op.index, op.type, ax, batch_dims, c.count(shape[:batch_dims]),
                      c.count(shape[batch_dims:ax]), shape[ax], c.count(cshape[batch_dims:]),
                      c.count(shape[ax + 1:]))
    return inp, coords, out, data


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, axis and batch_dims in range, the output shape, constant positions in range."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> GatherData:
    """GATHER's op data; input and output quantized alike."""
    inp, _, out, data = _parts(graph, op)
    m.same_quantization(op, inp, out, INT8)
    return data
