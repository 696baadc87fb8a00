"""AVERAGE_POOL_2D and MAX_POOL_2D, int8 (and int16: the same loops, typed by the tensors).

Bit-exact with TFLM's reference_integer_ops::AveragePool / MaxPool, run on
:class:`tvmdevice.ops.PoolData`: windows are clipped to the image, the
average divides by the number of taps inside the image and rounds half away
from zero with C integer division, and no rescaling happens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tvmdevice.errors import Refusal
from tvmdevice.kernel import PreparedCall
from tvmdevice.ops import PoolData
from tvmdevice.testing.reference import _common as c
from tvmdevice.testing.reference.conv import windows

__all__ = ["build", "run", "PoolCall"]


@dataclass(frozen=True, eq=False)
class PoolCall:
    """The op data plus the host's per-window tap counts (average only; int64, shape (OH, OW, 1))."""

    data: PoolData
    counts: np.ndarray | None


def build(data: PoolData) -> PreparedCall:
    """The host call for pooling op data."""
    c.check_window_extent(data, (data.batches, data.in_h, data.in_w, data.channels), (data.filter_h, data.filter_w))
    counts = None
    if data.average:
        # Taps inside the image, per output row and column (TFLM clips each
        # window to the image); the count of a window is their product.
        rows = _taps(data.out_h, data.stride_h, data.pad_h, data.filter_h, data.in_h)
        cols = _taps(data.out_w, data.stride_w, data.pad_w, data.filter_w, data.in_w)
        counts = (rows[:, None] * cols[None, :])[..., None]
        if np.any(counts == 0):
            # TFLM's AveragePool returns an error for a window outside the image.
            raise Refusal("a pooling window lies entirely in the padding", op=data, device="c")
    return PreparedCall(name="avg_pool2d_s8" if data.average else "max_pool2d_s8", kernel=run,
                        params=PoolCall(data, counts))


def _taps(n_out: int, stride: int, pad: int, filt: int, size: int) -> np.ndarray:
    origin = np.arange(n_out, dtype=np.int64) * stride - pad
    return np.maximum(np.minimum(filt, size - origin) - np.maximum(0, -origin), 0)


def run(params: PoolCall, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, output]."""
    p, counts = params.data, params.counts
    x, out = buffers[0], buffers[1]
    geometry = ((p.filter_h, p.filter_w), (p.stride_h, p.stride_w), (1, 1), (p.pad_h, p.pad_w), (p.out_h, p.out_w))
    if counts is not None:  # average
        acc = windows(x.astype(np.int64), *geometry, 0).sum(axis=(4, 5))
        half = counts // 2
        # (acc + count/2) / count for acc > 0, (acc - count/2) / count otherwise,
        # both with C's truncating division.
        y = np.where(acc > 0, c.c_div(acc + half, counts), c.c_div(acc - half, counts))
    else:
        # The type's minimum as padding never wins: TFLM starts its running max there too.
        y = windows(x, *geometry, np.iinfo(x.dtype).min).max(axis=(4, 5))
    out[...] = np.clip(y, p.act_min, p.act_max).astype(out.dtype)
