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
from tvmdevice.kernel import PreparedCall
from tvmdevice.ops import OpData
from tvmdevice.testing.reference import _common as c
from tvmdevice.testing.reference import conv, fully_connected, pooling, softmax
from tvmdevice.windows import effective_size

__all__ = ["BUILD"]


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
        if out.dtype == np.int32:  # TFLM's int32 sum wraps; the clamp to int32 does nothing
            y = c.wrap_i32(y)
    out[...] = _clamp(y, info.min, info.max, out)


# ---------------------------------------------------------------- CONV_2D / DEPTHWISE / FULLY_CONNECTED
def _finish(p: Any, acc: np.ndarray, bias: np.ndarray | None, out: np.ndarray) -> None:
    """Bias and requantization in the bias's width (op data ``bias_bits``), clamped to the output."""
    if p.bias_bits == 64:
        if bias is not None:
            acc = acc + bias.reshape(-1).astype(np.int64)
        y = c.requantize64(acc, p.multiplier, p.shift)
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


def _rescaled(p: Any, x: np.ndarray) -> np.ndarray:
    multiplier, shift = (3 << p.input_left_shift, 0) if p.input_multiplier == 0 else \
        (p.input_multiplier, p.input_left_shift)
    round_ = (1 << (shift - 1)) if shift > 0 else 0
    return _floor_shift(x.astype(np.int64) * multiplier + round_, shift)


def _interpolate(abs_x: np.ndarray, bits: int, saturated: int) -> np.ndarray:
    uh = abs_x >> bits
    inside = uh < 255
    k = np.where(inside, uh, 0)
    ua, ub = c.SIGMOID_TABLE[k], c.SIGMOID_TABLE[k + 1]
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
       for v in ("float32->int16", "int8->int16", "int16->int8", "int16->int16", "int16->int32")},
    "CONV_2D:int16": _build_conv, "DEPTHWISE_CONV_2D:int16": _build_conv,
    "FULLY_CONNECTED:int16": _call("fully_connected_s16", _run_fully_connected),
    "AVERAGE_POOL_2D:int16": _build_pool, "MAX_POOL_2D:int16": _build_pool,
    "SOFTMAX:int8->int16": _call("softmax_s8_s16", _run_softmax_s8_s16),
    "SOFTMAX:int16": _call("softmax_s16", _run_softmax_s16),
    "LOGISTIC:int16": _call("logistic_s16", _run_logistic),
    "TANH:int16": _call("tanh_s16", _run_tanh),
}
