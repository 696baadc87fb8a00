"""The numpy oracle of the shape and data-movement operators, int8 and int16.

Written from each operator's meaning with numpy's own indexing, independently
of the C kernels' byte loops: TRANSPOSE, SLICE, STRIDED_SLICE and BROADCAST_TO
as a strided view of the input, SPLIT/SPLIT_V/UNPACK with ``np.split``, PACK
with ``np.stack``, GATHER with ``np.take`` per batch, the resizes by fancy
indexing with the op data's index tables (TFLM's, computed once in
:mod:`tvmdevice.ops.resize`), PADV2 and int16 PAD by slice assignment.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvmdevice.errors import TVMDeviceError
from tvmdevice.kernel import PreparedCall
from tvmdevice.ops import ConcatData, CopyData, GatherData, PadData, ResizeData, SplitData

__all__ = ["build", "run_strided", "run_split", "run_pack", "run_gather", "run_resize_nearest",
           "run_resize_bilinear", "run_pad"]


def build(data: Any) -> PreparedCall:
    """The host call for the op data of a shape or data-movement operator."""
    if isinstance(data, CopyData):
        return PreparedCall(name="strided_copy", kernel=run_strided, params=data)
    if isinstance(data, SplitData):
        return PreparedCall(name="split", kernel=run_split, params=data)
    if isinstance(data, ConcatData):
        return PreparedCall(name="pack", kernel=run_pack, params=data)
    if isinstance(data, GatherData):
        return PreparedCall(name="gather", kernel=run_gather, params=data)
    if isinstance(data, PadData):
        return PreparedCall(name="pad", kernel=run_pad, params=data)
    if data.op_type == "RESIZE_NEAREST_NEIGHBOR":
        return PreparedCall(name="resize_nearest", kernel=run_resize_nearest, params=data)
    return PreparedCall(name="resize_bilinear", kernel=run_resize_bilinear, params=data)


def run_strided(params: CopyData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, index operands..., output]."""
    flat = np.ascontiguousarray(buffers[0]).reshape(-1)
    size = flat.itemsize
    view = np.lib.stride_tricks.as_strided(flat[params.offset:], shape=params.out_shape,
                                           strides=[s * size for s in params.strides], writeable=False)
    buffers[-1][...] = view.reshape(buffers[-1].shape)


def run_split(params: SplitData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [inputs..., outputs...]; the data input is ``params.input_index``."""
    n_in = len(buffers) - len(params.copy_sizes)
    blocks = buffers[params.input_index].reshape(params.outer_size, -1)
    cuts = np.cumsum(params.copy_sizes)[:-1]
    for out, part in zip(buffers[n_in:], np.split(blocks, cuts, axis=1)):
        out[...] = part.reshape(out.shape)


def run_pack(params: ConcatData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input_0, ..., input_n, output] (PACK)."""
    buffers[-1][...] = np.stack(buffers[:-1], axis=params.axis)


def run_gather(params: GatherData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, positions, output]; a position out of range fails as TFLM does."""
    p = params
    data = buffers[0].reshape(p.batch_size, p.outer_size, p.axis_size, p.inner_size)
    coords = np.asarray(buffers[1]).reshape(p.batch_size, p.coord_size)
    if np.any((coords < 0) | (coords >= p.axis_size)):
        raise TVMDeviceError(f"GATHER: a position is outside [0, {p.axis_size})")
    out = np.stack([np.take(data[b], coords[b], axis=1) for b in range(p.batch_size)])
    buffers[-1][...] = out.reshape(buffers[-1].shape)


def run_pad(params: PadData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, paddings, (constant_values), output]."""
    out = buffers[-1]
    out[...] = params.pad_value
    out[tuple(slice(a, a + d) for (a, _), d in zip(params.paddings, buffers[0].shape))] = buffers[0]


def run_resize_nearest(params: ResizeData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, size, output]."""
    buffers[-1][...] = buffers[0][:, params.rows][:, :, params.cols]


def run_resize_bilinear(params: ResizeData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, size, output]: TFLM's Q10 weights, the Q20 sum rounded half away from zero."""
    one = 1 << 10
    ry, rx = params.rows.reshape(-1, 3).astype(np.int64), params.cols.reshape(-1, 3).astype(np.int64)
    dy = (ry[:, 2] - one * ry[:, 0])[None, :, None, None]
    dx = (rx[:, 2] - one * rx[:, 0])[None, None, :, None]
    x = buffers[0].astype(np.int64)

    def at(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return x[:, rows][:, :, cols]

    total = (at(ry[:, 0], rx[:, 0]) * (one - dy) * (one - dx) + at(ry[:, 1], rx[:, 0]) * dy * (one - dx)
             + at(ry[:, 0], rx[:, 1]) * (one - dy) * dx + at(ry[:, 1], rx[:, 1]) * dy * dx)
    half = np.where(total > 0, 1 << 19, -(1 << 19))
    q = total + half
    # C's division truncates toward zero.
    buffers[-1][...] = (np.sign(q) * (np.abs(q) >> 20)).astype(np.int8)
