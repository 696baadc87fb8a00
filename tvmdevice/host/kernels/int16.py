"""The numpy reference of the int16x8 variants and SUB, bit-exact with TFLM: the oracle's part for them.

Each is TFLM's int16 kernel on the op data of :mod:`tvmdevice.ops.int16`, reusing the int8
references' windows and fixed-point helpers; what differs is written here: SUB, the int16 clamps,
the bias-typed accumulation of the int16x8 convolutions (int64 sums with the 64-bit
requantization, or int32), TFLM's lookup-table softmax and its sigmoid-table LOGISTIC / TANH.

Keys are kernel keys (:func:`tvmdevice.ops.kernel_key`).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tvmdevice.errors import KernelError
from tvmdevice.host.kernels import _common as c
from tvmdevice.host.kernels import conv, fully_connected, pooling, softmax
from tvmdevice.kernel import PreparedCall
from tvmdevice.ops import OpData
from tvmdevice.windows import effective_size

__all__ = ["BUILD", "requantize64", "SIGMOID_TABLE"]


def _clamp(y: np.ndarray, lo: int, hi: int, out: np.ndarray) -> np.ndarray:
    return np.clip(y, lo, hi).astype(out.dtype)


# ---------------------------------------------------------------- ADD / SUB / MUL
def _run_elementwise(p: Any, buffers: list[Any], device: Any = None) -> None:
    a, b, out = buffers[0].astype(np.int64), buffers[1].astype(np.int64), buffers[2]
    if p.op_type == "MUL":
        y = c.requantize((a + p.input1_offset) * (b + p.input2_offset), p.output_multiplier, p.output_shift)
    else:
        sa = c.requantize((a + p.input1_offset) << p.left_shift, p.input1_multiplier, p.input1_shift)
        sb = c.requantize((b + p.input2_offset) << p.left_shift, p.input2_multiplier, p.input2_shift)
        y = c.requantize(sa - sb if p.op_type == "SUB" else sa + sb, p.output_multiplier, p.output_shift)
    out[...] = _clamp(y + p.output_offset, p.act_min, p.act_max, out)


# ---------------------------------------------------------------- QUANTIZE
def _run_quantize(p: Any, buffers: list[Any], device: Any = None) -> None:
    x, out = buffers[0], buffers[1]
    info = np.iinfo(out.dtype)
    if p.from_float:
        q = (np.asarray(x, dtype=np.float32) / np.float32(p.output_scale)).astype(np.float64)
        rounded = np.nan_to_num(np.sign(q) * np.floor(np.abs(q) + 0.5), nan=0.0)
        y = np.clip(rounded, c.INT32_MIN, c.INT32_MAX).astype(np.int64) + p.output_offset
    else:
        y = c.requantize(x.astype(np.int64) + p.input_offset, p.multiplier, p.shift) + p.output_offset
    out[...] = _clamp(y, info.min, info.max, out)


# ---------------------------------------------------------------- CONV_2D / DEPTHWISE / FULLY_CONNECTED
def requantize64(acc: np.ndarray, multiplier: np.ndarray | int, shift: np.ndarray | int) -> np.ndarray:
    """TFLM's 64-bit MultiplyByQuantizedMultiplier: the multiplier rounded to 16 bits, one rounding shift,
    the result truncated to int32."""
    m = np.asarray(multiplier, dtype=np.int64)
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    total = 15 - np.asarray(shift, dtype=np.int64)
    y = (np.asarray(acc, dtype=np.int64) * reduced + (np.int64(1) << (total - 1))) >> total
    return c.wrap_i32(y)


def _finish(p: Any, acc: np.ndarray, bias: np.ndarray | None, out: np.ndarray) -> None:
    """Bias and requantization in the bias's width (op data ``bias_bits``), clamped to the output."""
    if p.bias_bits == 64:
        if bias is not None:
            acc = acc + bias.reshape(-1).astype(np.int64)
        y = requantize64(acc, p.multiplier, p.shift)
    else:
        acc = c.wrap_i32(acc)
        if bias is not None:
            acc = acc + bias.reshape(-1).astype(np.int64)
        y = c.requantize(acc, p.multiplier, p.shift)
    out[...] = _clamp(y, p.act_min, p.act_max, out).reshape(out.shape)


def _run_conv(p: Any, buffers: list[Any], device: Any = None) -> None:
    bias = buffers[2] if len(buffers) == 4 else None
    _finish(p, conv.accumulate(p, buffers[0], buffers[1]), bias, buffers[-1])


def _build_conv(data: Any) -> PreparedCall:
    extent = (effective_size(data.filter_h, data.dilation_h), effective_size(data.filter_w, data.dilation_w))
    c.check_window_extent(data, (data.batches, data.in_h, data.in_w, data.in_ch), extent)
    return PreparedCall(name="depthwise_conv2d_s16" if data.depthwise else "conv2d_s16", kernel=_run_conv,
                        params=data)


def _run_fully_connected(p: Any, buffers: list[Any], device: Any = None) -> None:
    bias = buffers[2] if len(buffers) == 4 else None
    _finish(p, fully_connected.accumulate(p, buffers[0], buffers[1]), bias, buffers[-1])


# ---------------------------------------------------------------- pooling, SOFTMAX int8 -> int16
def _build_pool(data: Any) -> PreparedCall:
    call = pooling.build(data)
    return PreparedCall(name=call.name.replace("_s8", "_s16"), kernel=call.kernel, params=call.params)


def _run_softmax_s8_s16(p: Any, buffers: list[Any], device: Any = None) -> None:
    buffers[1][...] = softmax.softmax_int8(buffers[0], p, output_bits=16)


# ---------------------------------------------------------------- SOFTMAX int16 -> int16
def _floor_shift(x: np.ndarray, n: int) -> np.ndarray:
    return np.asarray(x, dtype=np.int64) >> n  # numpy's >> on int64 is a floor


def _lut_lookup(value: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """TFLM's LUTLookup: 512 intervals of 128 inputs, interpolated in Q0.7 (int16 result)."""
    v = np.asarray(value, dtype=np.int64)
    index = (v + 32768) >> 7
    base = lut.astype(np.int64)[index]
    slope = lut.astype(np.int64)[index + 1] - base
    return ((base + _floor_shift(slope * (v & 0x7F) + 64, 7) + 32768) & 0xFFFF) - 32768


def _run_softmax_s16(p: Any, buffers: list[Any], device: Any = None) -> None:
    x, out = buffers[0], buffers[1]
    rows = x.reshape(-1, p.depth).astype(np.int64)
    scaled = c.requantize(rows - rows.max(axis=1, keepdims=True), p.input_multiplier, p.input_left_shift)
    exp = _lut_lookup(np.clip(scaled + 32767, -32768, 32767), p.exp_lut)
    total = exp.sum(axis=1)
    if np.any(total <= 0) or np.any(total >= 2**31):
        raise KernelError(f"operator {p.op_index} (SOFTMAX): a row's sum of exponentials leaves int32")
    headroom = np.array([32 - int(s).bit_length() for s in total], dtype=np.int64)
    shifted = ((total << (headroom - 1)) + (1 << 13)) >> 14
    reciprocal = _lut_lookup(np.clip(shifted - ((1 << 15) + (1 << 16)), -32768, 32767), p.one_over_one_plus_x_lut)
    right = (31 - headroom)[:, None]
    y = (exp * reciprocal[:, None] + (np.int64(1) << (right - 1))) >> right
    out[...] = np.clip(y, 0, 32767).astype(np.int16).reshape(out.shape)


# ---------------------------------------------------------------- LOGISTIC / TANH
#: TFLM's sigmoid(i / 24) table, unsigned Q0.16 (its values: the C kernels hold the same).
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


def _rescaled(p: Any, x: np.ndarray) -> np.ndarray:
    multiplier, shift = (3 << p.input_left_shift, 0) if p.input_multiplier == 0 else \
        (p.input_multiplier, p.input_left_shift)
    round_ = (1 << (shift - 1)) if shift > 0 else 0
    return _floor_shift(x.astype(np.int64) * multiplier + round_, shift)


def _interpolate(abs_x: np.ndarray, bits: int, saturated: int) -> np.ndarray:
    uh = abs_x >> bits
    inside = uh < 255
    k = np.where(inside, uh, 0)
    ua, ub = SIGMOID_TABLE[k], SIGMOID_TABLE[k + 1]
    return np.where(inside, (ua << bits) + (abs_x & ((1 << bits) - 1)) * (ub - ua), saturated)


def _run_logistic(p: Any, buffers: list[Any], device: Any = None) -> None:
    x = _rescaled(p, buffers[0])
    r = _interpolate(np.abs(x), 9, 0x7FFF << 10)
    r = np.where(x >= 0, r + (1 << 9), (1 << 25) - r + (1 << 9) - 1)
    buffers[1][...] = (r >> 10).astype(np.int16)


def _run_tanh(p: Any, buffers: list[Any], device: Any = None) -> None:
    x = _rescaled(p, buffers[0])
    r = _interpolate(np.abs(x), 8, 0xFFFF << 8)
    r = np.where(x >= 0, r - (1 << 23) + (1 << 7), -r + (1 << 23) + (1 << 7) - 1)
    buffers[1][...] = _floor_shift(r, 8).astype(np.int16)


def _call(name: str, kernel: Callable[..., None]) -> Callable[[OpData], PreparedCall]:
    return lambda data: PreparedCall(name=name, kernel=kernel, params=data)


#: Kernel key -> build(op data).
BUILD: dict[str, Callable[[Any], PreparedCall]] = {
    "SUB": _call("sub_s8", _run_elementwise),
    **{f"{op}:int16": _call(f"{op.lower()}_s16", _run_elementwise) for op in ("ADD", "SUB", "MUL")},
    **{f"QUANTIZE:{v}": _call("quantize_s16", _run_quantize)
       for v in ("float32->int16", "int8->int16", "int16->int8", "int16->int16")},
    "CONV_2D:int16": _build_conv, "DEPTHWISE_CONV_2D:int16": _build_conv,
    "FULLY_CONNECTED:int16": _call("fully_connected_s16", _run_fully_connected),
    "AVERAGE_POOL_2D:int16": _build_pool, "MAX_POOL_2D:int16": _build_pool,
    "SOFTMAX:int8->int16": _call("softmax_s8_s16", _run_softmax_s8_s16),
    "SOFTMAX:int16": _call("softmax_s16", _run_softmax_s16),
    "LOGISTIC:int16": _call("logistic_s16", _run_logistic),
    "TANH:int16": _call("tanh_s16", _run_tanh),
}
