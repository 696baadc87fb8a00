"""Shared pieces of the model builder: tensor handles, enums, shape arithmetic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import tflite

__all__ = ["TensorRef", "TT", "OPS", "ACTIVATIONS", "PADDINGS", "NUMPY_TYPES", "INT8_STD", "pair", "out_size",
           "scale_of"]

TT = tflite.TensorType
OPS = tflite.BuiltinOperator
ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
PADDINGS = {"SAME": tflite.Padding.SAME, "VALID": tflite.Padding.VALID}
NUMPY_TYPES = {TT.INT8: np.int8, TT.INT16: np.int16, TT.INT32: np.int32, TT.INT64: np.int64, TT.FLOAT32: np.float32}
# Spread of a uniform int8 value (std of U[-128, 127]) used to guess scales.
INT8_STD = 74.0


@dataclass(frozen=True)
class TensorRef:
    """A tensor of the model being built (returned by every builder method)."""

    index: int
    shape: tuple[int, ...]
    dtype: type
    scale: float | None
    zero_point: int


def scale_of(t: TensorRef) -> float:
    """The scale of an int8 tensor; float32 tensors have none."""
    if t.scale is None:
        raise ValueError(f"tensor {t.index} is not quantized; this operator needs an int8 input")
    return t.scale


def pair(v: int | Sequence[int]) -> tuple[int, int]:
    return (int(v), int(v)) if isinstance(v, (int, np.integer)) else (int(v[0]), int(v[1]))


def out_size(padding: str, size: int, k: int, stride: int, dilation: int) -> int:
    eff = (k - 1) * dilation + 1
    return -(-size // stride) if padding == "SAME" else (size - eff) // stride + 1
