"""The float model an int8 model stands for: every quantized tensor made float32, constants dequantized.

A model written by :class:`ModelBuilder` (or any :class:`ModelSpec`) has no float original; its *float
twin* is what a converter would have quantized into it: the same operators and shapes, each constant
``scale * (q - zero_point)`` (per channel along its ``quantized_dimension``), each activation float32
without quantization. Comparing the int8 model's dequantized outputs with the twin's measures the
quantization error alone, as validating an int8 conversion against its float model does.
"""

from __future__ import annotations

import copy

import numpy as np

from tvmdevice.aot.builder._common import NUMPY_TYPES, TT
from tvmdevice.aot.builder._flatbuffer import ModelSpec, serialize

__all__ = ["float_twin"]


def float_twin(spec: ModelSpec) -> bytes:
    """The float32 model ``spec`` quantizes, as TFLite flatbuffer bytes (``spec`` is not changed)."""
    twin = copy.deepcopy(spec)
    for t in twin.tensors:
        if t.scales is None:
            continue
        if t.buffer and twin.buffers[t.buffer]:
            q = np.frombuffer(twin.buffers[t.buffer], dtype=np.dtype(NUMPY_TYPES[t.type]).newbyteorder("<"))
            q = q.reshape(t.shape).astype(np.float64)
            scales = np.asarray(t.scales, dtype=np.float64)
            zps = np.asarray(t.zero_points if t.zero_points is not None else [0] * len(scales), dtype=np.float64)
            if len(scales) > 1:
                axis_shape = [1] * len(t.shape)
                axis_shape[t.quantized_dimension] = len(scales)
                scales, zps = scales.reshape(axis_shape), zps.reshape(axis_shape)
            real = (scales * (q - zps)).astype("<f4")
            twin.buffers[t.buffer] = real.tobytes()
        t.type = TT.FLOAT32
        t.scales = None
        t.zero_points = None
        t.quantized_dimension = 0
    return serialize(twin)
