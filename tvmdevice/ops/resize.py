"""RESIZE_NEAREST_NEIGHBOR (int8, int16) and RESIZE_BILINEAR (int8): TFLM's reference kernels.

Which input rows and columns each output row and column reads depends only
on the sizes and the options, so it is computed here, once, exactly as TFLM
computes it at every run: nearest neighbour in float32 (``GetNearestNeighbor``,
numpy's float32 arithmetic is IEEE single precision like the C++), bilinear
in TFLM's integer path (``ResizeBilinearInteger``: Q10 positions).  The kernels
only read the tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops import _movement as m
from tvmdevice.ops._base import INT8, INT32, OpData, Operand, Signature

__all__ = ["ResizeData", "NEAREST_SIGNATURE", "BILINEAR_SIGNATURE", "validate", "analyze", "nearest_indices",
           "bilinear_table"]

_OPTIONS = ("align_corners", "half_pixel_centers")
NEAREST_SIGNATURE = Signature((Operand("input", m.MOVABLE), Operand("size", INT32, constant=True)),
                              (Operand("output", m.MOVABLE),), _OPTIONS)
BILINEAR_SIGNATURE = Signature((Operand("input", INT8), Operand("size", INT32, constant=True)),
                               (Operand("output", INT8),), _OPTIONS)


@dataclass(frozen=True)
class ResizeData(OpData):
    """Resize op data, NHWC.

    :ivar rows: nearest: the input row of each output row ``[out_h]``; bilinear:
        ``(y0, y1, input_y)`` per output row ``[out_h * 3]``, ``input_y`` in Q10.
    :ivar cols: the same for the columns.
    """

    batches: int
    in_h: int
    in_w: int
    channels: int
    out_h: int
    out_w: int
    itemsize: int
    rows: np.ndarray
    cols: np.ndarray


def nearest_indices(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool) -> np.ndarray:
    """TFLM's GetNearestNeighbor for every output index, in float32 as TFLM computes it."""
    f32 = np.float32
    if align_corners and out_size > 1:
        scale = f32(in_size - 1) / f32(out_size - 1)
    else:
        scale = f32(in_size) / f32(out_size)
    offset = f32(0.5) if half_pixel_centers else f32(0.0)
    out = []
    for v in range(out_size):
        x = (f32(v) + offset) * scale
        # TfLiteRound rounds half away from zero; floor otherwise.
        k = int(np.sign(x) * np.floor(np.abs(x) + f32(0.5))) if align_corners else int(np.floor(x))
        k = min(k, in_size - 1)
        if half_pixel_centers:
            k = max(0, k)
        out.append(k)
    return c.readonly(np.array(out, dtype=np.int32))


def _div(a: int, b: int) -> int:
    """C's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def bilinear_table(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool) -> np.ndarray:
    """``(lower, upper, position in Q10)`` per output index: TFLM's ComputeInterpolationValuesInteger."""
    one = 1 << 10
    if align_corners and out_size > 1:
        scale = _div(one * (in_size - 1) + (out_size - 1) // 2, out_size - 1)
    else:
        scale = _div(one * in_size + out_size // 2, out_size)
    table = []
    for v in range(out_size):
        pos = v * scale + scale // 2 - (1 << 9) if half_pixel_centers else v * scale
        lower = max(_div(pos, one), 0)
        upper = min(_div(pos + one - 1, one), in_size - 1)
        table += [lower, upper, pos]
    return c.readonly(np.array(table, dtype=np.int32))


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, ResizeData]:
    (inp, size_t), _, out = c.operands(graph, op, 2)
    shape = m.dims(inp)
    if len(shape) != 4:
        raise c.malformed(op, f"the input must be 4-D (NHWC), not {list(shape)}")
    if len(size_t.shape) != 1:
        raise c.malformed(op, f"size tensor {size_t.index} must be 1-D")
    out_h, out_w = m.constant_ints(op, size_t, "size", 2)
    c.check_shape(op, out, (shape[0], out_h, out_w, shape[3]), "output")
    align, half = bool(op.options.get("align_corners", False)), bool(op.options.get("half_pixel_centers", False))
    if align and half:
        raise c.malformed(op, "half_pixel_centers and align_corners are both set (TFLM refuses it)")
    table = nearest_indices if op.type == "RESIZE_NEAREST_NEIGHBOR" else bilinear_table
    data = ResizeData(op.index, op.type, shape[0], shape[1], shape[2], shape[3], out_h, out_w,
                      np.dtype(inp.dtype).itemsize, table(shape[1], out_h, align, half),
                      table(shape[2], out_w, align, half))
    return inp, out, data


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, a 4-D input, a constant size of two values, the output shape, the options' rule."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> ResizeData:
    """The index tables; input and output quantized alike (values are not rescaled)."""
    inp, out, data = _parts(graph, op)
    m.same_quantization(op, inp, out, m.MOVABLE if op.type == "RESIZE_NEAREST_NEIGHBOR" else INT8)
    return data
