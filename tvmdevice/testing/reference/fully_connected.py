"""FULLY_CONNECTED, int8, per-tensor or per-channel weights, any batch count.

Bit-exact with TFLM's reference_integer_ops::FullyConnected (per-tensor) and
FullyConnectedPerChannel, run on :class:`tvmdevice.ops.FullyConnectedData`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvmdevice.kernel import PreparedCall
from tvmdevice.ops import FullyConnectedData
from tvmdevice.testing.reference import _common as c

__all__ = ["build", "run", "accumulate"]


def build(data: FullyConnectedData) -> PreparedCall:
    """The host call for FULLY_CONNECTED op data."""
    return PreparedCall(name="fully_connected_s8", kernel=run, params=data)


def run(params: FullyConnectedData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, weights, bias or None, output]."""
    c.finish_int8(params, buffers, c.wrap_i32(accumulate(params, buffers[0], buffers[1])))


def accumulate(p: FullyConnectedData, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The exact sums of (input + input_offset) * (weight + filter_offset), [batches, out_ch] int64.

    float64 is exact here: |x| <= 32768, |w| <= 255, and the sums stay far below 2**53.
    """
    xs = x.reshape(p.batches, p.accum_depth).astype(np.float64) + p.input_offset
    ws = w.astype(np.float64) + p.filter_offset
    return np.rint(xs @ ws.T).astype(np.int64)
