"""RESHAPE, PAD, CONCATENATION and MEAN, int8.

RESHAPE, PAD and CONCATENATION move values without rescaling, as TFLM does
(the op data refuses inputs and outputs quantized differently).  PAD fills
with the output zero point (TFLM's int8 PAD).

MEAN is TFLM's reference_ops::QuantizedMeanOrSum on
:class:`tvmdevice.ops.MeanData`: int32 sum, plus ``input_offset * count``,
requantized by the op data's multiplier (``1 / count`` folded in).  Current
TFLM (the PyPI build these kernels are checked against) uses it for every
int8 MEAN; older releases had a 4-D spatial fast path
(reference_integer_ops::Mean) and a truncating path for equal quantization,
which round differently.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvmdevice.kernel import PreparedCall
from tvmdevice.ops import ConcatData, MeanData, PadData, ViewData
from tvmdevice.testing.reference import _common as c

__all__ = ["build", "run_reshape", "run_pad", "run_concat", "run_mean"]


def build(data: ViewData | PadData | ConcatData | MeanData) -> PreparedCall:
    """The host call for RESHAPE, PAD, CONCATENATION or MEAN op data."""
    if isinstance(data, ViewData):
        return PreparedCall(name="reshape", kernel=run_reshape, params=data)
    if isinstance(data, PadData):
        return PreparedCall(name="pad_s8", kernel=run_pad, params=data)
    if isinstance(data, ConcatData):
        return PreparedCall(name="concatenation", kernel=run_concat, params=data)
    return PreparedCall(name="mean_s8", kernel=run_mean, params=data)


def run_reshape(params: ViewData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, shape or None, output]; a flat copy."""
    out = buffers[-1]
    out.reshape(-1)[...] = buffers[0].reshape(-1)


def run_pad(params: PadData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, paddings, output]."""
    out = buffers[2]
    out[...] = params.pad_value
    inner = tuple(slice(a, a + d) for (a, _), d in zip(params.paddings, buffers[0].shape))
    out[inner] = buffers[0]


def run_concat(params: ConcatData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input_0, ..., input_n, output]."""
    buffers[-1][...] = np.concatenate(buffers[:-1], axis=params.axis)


def run_mean(params: MeanData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, axis, output]."""
    p = params
    out = buffers[2]
    total = c.wrap_i32(buffers[0].astype(np.int64).sum(axis=p.axes))
    shifted = c.wrap_i32(total + p.input_offset * p.count)
    y = np.clip(c.requantize(shifted, p.multiplier, p.shift) + p.output_offset, -128, 127)
    out[...] = np.asarray(y, dtype=np.int8).reshape(out.shape)
