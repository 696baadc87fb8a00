"""MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU, RELU, RELU6, LEAKY_RELU, HARD_SWISH,
SUM, REDUCE_MAX, ARG_MAX, ARG_MIN, TRANSPOSE_CONV, BATCH_MATMUL and LOG_SOFTMAX, int8: numpy twins
of TFLM's reference kernels; RELU_N1_TO_1 is RELU's with its own bounds (LiteRT's, TFLM has none).

Element-wise, so numpy broadcasting gives TFLM's broadcast loops' values; the
int16 steps of HARD_SWISH are done on int64 arrays with the same rounding.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tvmdevice.kernel import PreparedCall
from tvmdevice.testing.reference import _common as c
from tvmdevice.testing.reference import _fixedpoint as fp
from tvmdevice.testing.reference import shape

__all__ = ["BUILD"]

_Kernel = Callable[[Any, list, Any], None]


def _minmax(params: Any, buffers: list[Any], device: Any = None) -> None:
    fn = np.maximum if params.maximum else np.minimum
    buffers[2][...] = fn(buffers[0], buffers[1])


def _squared_difference(params: Any, buffers: list[Any], device: Any = None) -> None:
    p = params
    a = (buffers[0].astype(np.int64) + p.input1_offset) << p.left_shift
    b = (buffers[1].astype(np.int64) + p.input2_offset) << p.left_shift
    diff = c.requantize(a, p.input1_multiplier, p.input1_shift) - c.requantize(b, p.input2_multiplier, p.input2_shift)
    y = c.requantize(diff * diff, p.output_multiplier, p.output_shift) + p.output_offset
    buffers[2][...] = c.clamp_to_int8(y, -128, 127)


def _prelu(params: Any, buffers: list[Any], device: Any = None) -> None:
    p = params
    x = buffers[0].astype(np.int64) + p.input_offset
    alpha = buffers[1].astype(np.int64) + p.alpha_offset
    positive = c.requantize(x, p.output_multiplier_1, p.output_shift_1)
    negative = c.requantize(x * alpha, p.output_multiplier_2, p.output_shift_2)
    buffers[2][...] = c.clamp_to_int8(np.where(x >= 0, positive, negative) + p.output_offset, -128, 127)


def _relu(params: Any, buffers: list[Any], device: Any = None) -> None:
    p = params
    y = p.output_offset + c.requantize(buffers[0].astype(np.int64) - p.input_offset, p.output_multiplier,
                                       p.output_shift)
    buffers[1][...] = c.clamp_to_int8(y, p.act_min, p.act_max)


def _relu6(params: Any, buffers: list[Any], device: Any = None) -> None:
    buffers[1][...] = np.clip(buffers[0], params.zero, params.six).astype(np.int8)


def _leaky_relu(params: Any, buffers: list[Any], device: Any = None) -> None:
    p = params
    x = buffers[0].astype(np.int64) - p.input_offset
    identity = c.requantize(x, p.output_multiplier_identity, p.output_shift_identity)
    alpha = np.sign(p.output_multiplier_alpha) * c.requantize(x, abs(p.output_multiplier_alpha), p.output_shift_alpha)
    buffers[1][...] = c.clamp_to_int8(p.output_offset + np.where(x >= 0, identity, alpha), -128, 127)


def _srdhm16(a: np.ndarray, b: np.ndarray | int, rounding: bool = True) -> np.ndarray:
    ab = np.asarray(a, np.int64) * np.asarray(b, np.int64)
    if rounding:
        ab = ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    q = c.c_div(ab, 1 << 15)
    return np.where((np.asarray(a) == -32768) & (np.asarray(b) == -32768), 32767, q)


def _sat_shift16(x: np.ndarray, amount: int) -> np.ndarray:
    return np.clip(x * (1 << amount), -32768, 32767)


def _rdbpot(x: np.ndarray, exponent: int) -> np.ndarray:
    mask = (1 << exponent) - 1
    return (x >> exponent) + ((x & mask) > ((mask >> 1) + (x < 0)))


def _hard_swish(params: Any, buffers: list[Any], device: Any = None) -> None:
    p = params
    hires = (buffers[0].astype(np.int64) - p.input_zero_point) * 128
    preshift = _srdhm16(hires, p.output_multiplier_fixedpoint_int16)
    e = p.reluish_multiplier_exponent
    reluish = _sat_shift16(hires, e - 1) if e > 0 else hires
    reluish = _srdhm16(reluish, p.reluish_multiplier_fixedpoint_int16)
    if e > 0:
        reluish = _sat_shift16(reluish, 1)
    elif e < 0:
        reluish = _rdbpot(reluish, -e)
    reluish = (reluish + (1 << 15)) >> 1
    y = _rdbpot(_srdhm16(reluish, preshift, rounding=False), -p.output_multiplier_exponent)
    buffers[1][...] = c.clamp_to_int8(y + p.output_zero_point, -128, 127)


def _reduce_max(params: Any, buffers: list[Any], device: Any = None) -> None:
    out = buffers[2]
    out[...] = np.max(buffers[0], axis=params.axes).reshape(out.shape)


def _arg(params: Any, buffers: list[Any], device: Any = None) -> None:
    p = params
    x = buffers[0].reshape(p.outer_size, p.axis_size, p.inner_size)
    # numpy's argmax/argmin return the first index of the extreme value, as TFLM's strict comparison does.
    idx = x.argmax(axis=1) if p.op_type == "ARG_MAX" else x.argmin(axis=1)
    buffers[2][...] = idx.astype(buffers[2].dtype).reshape(buffers[2].shape)


def _transpose_conv(params: Any, buffers: list[Any], device: Any = None) -> None:
    """TFLM's scatter: every input pixel times every tap lands on the output canvas, which is then cropped."""
    p = params
    filt = buffers[1].astype(np.int64)  # [oc, kh, kw, ic]
    x = buffers[2].astype(np.int64) + p.input_offset
    bias = buffers[3] if p.num_inputs > 3 else None
    height = max((p.in_h - 1) * p.stride_h + p.filter_h, p.pad_h + p.out_h)
    width = max((p.in_w - 1) * p.stride_w + p.filter_w, p.pad_w + p.out_w)
    canvas = np.zeros((p.batches, height, width, p.out_ch), dtype=np.int64)
    for ky in range(p.filter_h):
        for kx in range(p.filter_w):
            taps = np.einsum("nhwi,oi->nhwo", x, filt[:, ky, kx, :])
            canvas[:, ky:ky + (p.in_h - 1) * p.stride_h + 1:p.stride_h,
                   kx:kx + (p.in_w - 1) * p.stride_w + 1:p.stride_w, :] += taps
    acc = c.wrap_i32(canvas[:, p.pad_h:p.pad_h + p.out_h, p.pad_w:p.pad_w + p.out_w, :])
    if bias is not None:
        acc = c.wrap_i32(acc + bias.astype(np.int64))
    y = c.requantize(acc, p.multiplier.astype(np.int64), p.shift.astype(np.int64)) + p.output_offset
    buffers[p.num_inputs][...] = c.clamp_to_int8(y, p.act_min, p.act_max)


def _batch_matmul(params: Any, buffers: list[Any], device: Any = None) -> None:
    p = params
    lhs = buffers[0].astype(np.int64) + p.lhs_offset
    rhs = buffers[1].astype(np.int64) + p.rhs_offset
    if p.adj_x:
        lhs = np.swapaxes(lhs, -1, -2)
    if p.adj_y:
        rhs = np.swapaxes(rhs, -1, -2)
    acc = c.wrap_i32(np.matmul(lhs, rhs))
    y = c.requantize(acc, p.output_multiplier, p.output_shift) + p.output_offset
    out = buffers[2]
    out[...] = c.clamp_to_int8(y, -128, 127).reshape(out.shape)


def _clz(x: np.ndarray) -> np.ndarray:
    """Leading zeros of positive int32 values (0 counts 32)."""
    x = np.asarray(x, dtype=np.int64)
    return np.where(x > 0, 31 - np.floor(np.log2(np.maximum(x, 1))).astype(np.int64), 32)


def _sat(x: np.ndarray) -> np.ndarray:
    return np.clip(x, c.INT32_MIN, c.INT32_MAX)


def _mul_by_pot(x: np.ndarray, exponent: np.ndarray | int) -> np.ndarray:
    # SaturatingRoundingMultiplyByPOTParam for non-negative exponents, per element.
    x = np.asarray(x, dtype=np.int64)
    return np.clip(x * (np.int64(1) << np.asarray(exponent, np.int64)), c.INT32_MIN, c.INT32_MAX)


def _log_q12_to_q5(x: np.ndarray) -> np.ndarray:
    """TFLM's log_x_for_x_greater_than_or_equal_to_1_impl<5, 12>, vectorised."""
    log_2, sqrt_sqrt_half, sqrt_half = 1488522236, 1805811301, 1518500250
    alpha_n, alpha_d, alpha_i, alpha_f = 117049297, 127690142, 1057819769, 638450708
    quarter = fp.rounding_divide_by_pot(np.int64(536870912), 6)
    ha = _clz(x)
    r_a = fp.saturating_mul_by_pot(fp.srdhm(_mul_by_pot(x, ha - 1), sqrt_half), 1)
    za = _sat(_mul_by_pot(12 - ha, 25) + quarter)
    z_b = fp.srdhm(x, sqrt_half)
    hb = _clz(z_b) - 1
    r_b = _mul_by_pot(x, hb)
    zb = _sat(_mul_by_pot(12 - hb, 25) - quarter)
    r, z = np.minimum(r_a, r_b), np.maximum(za, zb)
    p = c.c_div(r + sqrt_sqrt_half + np.where(r + sqrt_sqrt_half >= 0, 1, -1), 2)
    q = c.wrap_i32(2 * c.wrap_i32(r - sqrt_sqrt_half))
    sq = fp.srdhm(q, q)
    num = c.wrap_i32(fp.srdhm(q, r) + fp.srdhm(fp.srdhm(q, sq), alpha_n))
    denom = c.wrap_i32(fp.srdhm(p, c.wrap_i32(alpha_i + q + fp.srdhm(alpha_d, sq))) + fp.srdhm(alpha_f, q))
    total = c.wrap_i32(fp.srdhm(z, log_2) + fp.srdhm(fp.rounding_divide_by_pot(num, 6),
                                                      fp.one_over_one_plus_x_for_x_in_0_1(denom)))
    return fp.saturating_mul_by_pot(total, 1)


def _log_softmax(params: Any, buffers: list[Any], device: Any = None) -> None:
    p = params
    x = buffers[0].reshape(p.rows, p.depth).astype(np.int64)
    diff = x - x.max(axis=1, keepdims=True)
    diff_q5 = c.requantize(diff, p.input_multiplier, p.input_left_shift)
    exps = fp.rounding_divide_by_pot(fp.exp_on_negative_values(diff_q5, 5), 12)
    sums = c.wrap_i32(np.where(diff >= p.diff_min, exps, 0).sum(axis=1, keepdims=True))
    log_sum = _log_q12_to_q5(sums)
    reversed_ = c.requantize(c.wrap_i32(log_sum + c.INT32_MIN), p.reverse_scaling_divisor,
                             -p.reverse_scaling_right_shift)
    adjusted = np.maximum(p.diff_min - 1, reversed_)
    y = fp.rounding_divide_by_pot(c.wrap_i32(diff_q5 - log_sum), 22) + 127
    out = np.where(diff > adjusted, np.clip(y, -128, 127), -128)
    buffers[1][...] = out.astype(np.int8).reshape(buffers[1].shape)


_KERNELS: dict[str, tuple[str, _Kernel]] = {
    "MAXIMUM": ("maximum_s8", _minmax), "MINIMUM": ("minimum_s8", _minmax),
    "SQUARED_DIFFERENCE": ("squared_difference_s8", _squared_difference), "PRELU": ("prelu_s8", _prelu),
    "RELU": ("relu_s8", _relu), "RELU6": ("relu6_s8", _relu6), "RELU_N1_TO_1": ("relu_s8", _relu),
    "LEAKY_RELU": ("leaky_relu_s8", _leaky_relu), "HARD_SWISH": ("hard_swish_s8", _hard_swish),
    "SUM": ("sum_s8", shape.run_mean), "REDUCE_MAX": ("reduce_max_s8", _reduce_max),
    "ARG_MAX": ("arg_max_s8", _arg), "ARG_MIN": ("arg_min_s8", _arg),
    "TRANSPOSE_CONV": ("transpose_conv_s8", _transpose_conv), "BATCH_MATMUL": ("batch_matmul_s8", _batch_matmul),
    "LOG_SOFTMAX": ("log_softmax_s8", _log_softmax),
}


def _build(data: Any) -> PreparedCall:
    name, kernel = _KERNELS[data.op_type]
    return PreparedCall(name=name, kernel=kernel, params=data)


#: Operator type -> build(op data) -> the host reference call.
BUILD: dict[str, Callable[[Any], PreparedCall]] = {op_type: _build for op_type in _KERNELS}
