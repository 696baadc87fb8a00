"""Integer primitives shared by the host reference kernels, and the host's own limits.

The TFLM Prepare-time math (quantization checks, multipliers, padding,
activation clamps) lives in :mod:`tvmdevice.ops`; here are only the C types'
behaviour reproduced on numpy int64 arrays that hold int32 values, and the
limit of the reference kernels' padded-window approach.
"""

from __future__ import annotations

import numpy as np

from tvmdevice.errors import Refusal
from tvmdevice.ops import OpData
from tvmdevice.quantization import multiply_by_quantized_multiplier

__all__ = ["INT32_MIN", "INT32_MAX", "MAX_WINDOW_ELEMENTS", "wrap_i32", "requantize", "clamp_to_int8", "c_div",
           "check_window_extent"]

#: Largest padded input (elements) a windowed kernel builds.  Legitimate
#: models stay far below (224x224x64 is 3.2M); only absurd dilations or
#: kernel sizes in hostile files reach it.
MAX_WINDOW_ELEMENTS = 1 << 24

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


def wrap_i32(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap of int64 values to int32 range, as C arithmetic does."""
    x = np.asarray(x, dtype=np.int64)
    return ((x + 2**31) & 0xFFFFFFFF) - 2**31


def requantize(acc: np.ndarray, multiplier: np.ndarray | int, shift: np.ndarray | int) -> np.ndarray:
    """MultiplyByQuantizedMultiplier on int32 accumulators (int64 in, int64 out)."""
    return multiply_by_quantized_multiplier(wrap_i32(acc), multiplier, shift)


def clamp_to_int8(x: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Clamp to the activation range and narrow to int8."""
    return np.clip(x, lo, hi).astype(np.int8)


def c_div(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """Integer division truncating toward zero, as C does (numpy floors)."""
    a = np.asarray(a, dtype=np.int64)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (np.asarray(b) < 0), -q, q)


def check_window_extent(data: OpData, shape: tuple[int, int, int, int], effective: tuple[int, int]) -> None:
    """Refuse windows so large that padding the input would exhaust memory.

    TFLM skips taps outside the image one by one; the reference pads the
    input instead, which needs ``N * (H + KH_eff) * (W + KW_eff) * C`` cells.
    """
    n, h, w, ch = shape
    cells = n * (h + effective[0]) * (w + effective[1]) * ch
    if cells > MAX_WINDOW_ELEMENTS:
        raise Refusal(f"effective filter size {effective} on input {list(shape)} needs {cells} padded cells, "
                      f"over the host reference kernel's {MAX_WINDOW_ELEMENTS}", op=data, device="c")
