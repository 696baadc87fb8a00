"""Integer primitives shared by the numpy reference kernels, and their own limits.

The TFLM Prepare-time math (quantization checks, multipliers, padding,
activation clamps) lives in :mod:`tvmdevice.ops`; here are only the C types'
behaviour reproduced on numpy int64 arrays that hold int32 values, TFLM's
two requantizations (32- and 64-bit accumulators) and its sigmoid table, each
written once for every reference kernel (and apart from the C kernels, which
they check), and the limit of the reference kernels' padded-window approach.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvmdevice.errors import Refusal
from tvmdevice.ops import OpData
from tvmdevice.quantization import multiply_by_quantized_multiplier

__all__ = ["INT32_MIN", "INT32_MAX", "MAX_WINDOW_ELEMENTS", "SIGMOID_TABLE", "wrap_i32", "requantize", "requantize64",
           "clamp_to_int8", "c_div", "check_window_extent"]

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


def finish_int8(p: Any, buffers: list[Any], acc: np.ndarray) -> None:
    """The int8 epilogue of CONV_2D and FULLY_CONNECTED: the int32 sums plus the bias (``buffers[2]`` when
    there are four buffers and it is not None, an absent bias), requantized, offset and clamped into the
    output, the last buffer."""
    if len(buffers) == 4 and buffers[2] is not None:
        acc = acc + buffers[2].reshape(-1).astype(np.int64)
    out = buffers[-1]
    y = requantize(acc, p.multiplier, p.shift) + p.output_offset
    out[...] = clamp_to_int8(y, p.act_min, p.act_max).reshape(out.shape)


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


def requantize64(acc: np.ndarray, multiplier: np.ndarray | int, shift: np.ndarray | int) -> np.ndarray:
    """TFLM's 64-bit MultiplyByQuantizedMultiplier: the multiplier rounded to 16 bits, one rounding shift,
    the result truncated to int32."""
    m = np.asarray(multiplier, dtype=np.int64)
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    total = 15 - np.asarray(shift, dtype=np.int64)
    y = (np.asarray(acc, dtype=np.int64) * reduced + (np.int64(1) << (total - 1))) >> total
    return wrap_i32(y)


#: TFLM's sigmoid_table_uint16: sigmoid(i / 24) in unsigned Q0.16, which the int16 LOGISTIC/TANH and the
#: LSTM gates interpolate (the C kernels hold their own copy: the oracle does not read theirs).
SIGMOID_TABLE = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
], dtype=np.int64)
