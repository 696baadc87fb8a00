"""gemmlowp's fixed-point arithmetic (fixedpoint.h), vectorised over numpy.

Values are int64 arrays holding int32 raw fixed-point numbers; a number with
``k`` integer bits represents ``raw / 2**(31 - k)``.  Every operation
reproduces the int32 C result bit for bit, including wrap-around where the C
code adds without saturating.  TFLM's int8 SOFTMAX, LOGISTIC and TANH
reference kernels are built from these pieces.
"""

from __future__ import annotations

import numpy as np

from tvmdevice.testing.reference._common import INT32_MAX, INT32_MIN, c_div, wrap_i32

__all__ = [
    "srdhm", "rounding_divide_by_pot", "saturating_mul_by_pot", "exp_on_negative_values",
    "one_over_one_plus_x_for_x_in_0_1", "logistic", "tanh", "get_reciprocal",
]


def srdhm(a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
    """SaturatingRoundingDoublingHighMul: round(a * b / 2**31), saturating MIN*MIN."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    high = c_div(ab + nudge, 1 << 31)
    return np.where((a == INT32_MIN) & (b == INT32_MIN), INT32_MAX, high)


def rounding_divide_by_pot(x: np.ndarray, exponent: int | np.ndarray) -> np.ndarray:
    """RoundingDivideByPOT: x / 2**exponent rounded to nearest, ties away from zero
    (``exponent`` may be an array broadcasting against ``x``)."""
    x = np.asarray(x, dtype=np.int64)
    mask = np.left_shift(1, exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def saturating_mul_by_pot(x: np.ndarray, exponent: int) -> np.ndarray:
    """SaturatingRoundingMultiplyByPOT: saturating left shift, or rounding right shift."""
    x = np.asarray(x, dtype=np.int64)
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    shifted = wrap_i32(x << exponent)
    return np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, shifted))


def _rounding_half_sum(a: np.ndarray, b: int) -> np.ndarray:
    s = np.asarray(a, dtype=np.int64) + b
    return c_div(s + np.where(s >= 0, 1, -1), 2)


def _exp_on_interval_between_negative_one_quarter_and_0_excl(a: np.ndarray) -> np.ndarray:
    # Taylor expansion around -1/8; all values have 0 integer bits.
    constant_term = 1895147668  # exp(-1/8)
    constant_1_over_3 = 715827883
    x = wrap_i32(a + (1 << 28))  # a + 1/8
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = rounding_divide_by_pot(x4, 2)
    poly = rounding_divide_by_pot(wrap_i32(srdhm(wrap_i32(x4_over_4 + x3), constant_1_over_3) + x2), 1)
    return wrap_i32(constant_term + srdhm(constant_term, wrap_i32(x + poly)))


# exp(-2**k) as Q0.31 for the barrel shifter, k = -2..4.
_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
               (2, 39332535), (3, 720401), (4, 242))


def exp_on_negative_values(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """exp(a) for a <= 0 given with ``integer_bits``; result has 0 integer bits."""
    a = np.asarray(a, dtype=np.int64)
    frac = 31 - integer_bits
    one_quarter = 1 << (frac - 2)
    a_mod_quarter_minus_one_quarter = wrap_i32((a & (one_quarter - 1)) - one_quarter)
    result = _exp_on_interval_between_negative_one_quarter_and_0_excl(
        saturating_mul_by_pot(a_mod_quarter_minus_one_quarter, integer_bits))
    remainder = wrap_i32(a_mod_quarter_minus_one_quarter - a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            bit = 1 << (frac + exponent)
            result = np.where((remainder & bit) != 0, srdhm(result, multiplier), result)
    if integer_bits > 5:
        clamp = -(1 << (36 - integer_bits))  # -32.0
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, INT32_MAX, result)


def _newton_reciprocal_x2(half_denominator: np.ndarray) -> np.ndarray:
    # Newton-Raphson for 1 / half_denominator; result has 2 integer bits.
    x = wrap_i32(1515870810 + srdhm(half_denominator, -1010580540))  # 48/17 - 32/17 * d
    one_f2 = 1 << 29
    for _ in range(3):
        half_denominator_times_x = srdhm(half_denominator, x)
        one_minus = wrap_i32(one_f2 - half_denominator_times_x)
        x = wrap_i32(x + saturating_mul_by_pot(srdhm(x, one_minus), 2))
    return x


def one_over_one_plus_x_for_x_in_0_1(a: np.ndarray) -> np.ndarray:
    """1 / (1 + a) for a in [0, 1), 0 integer bits in and out."""
    x = _newton_reciprocal_x2(_rounding_half_sum(a, INT32_MAX))
    return saturating_mul_by_pot(x, 1)  # ExactMulByPot<-1>, then Rescale<0> from 1 integer bit


def _one_minus_x_over_one_plus_x_for_x_in_0_1(a: np.ndarray) -> np.ndarray:
    x = _newton_reciprocal_x2(_rounding_half_sum(a, INT32_MAX))
    return saturating_mul_by_pot(wrap_i32(x - (1 << 29)), 2)


def logistic(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp::logistic; input with ``integer_bits``, result with 0."""
    a = np.asarray(a, dtype=np.int64)
    positive = a > 0
    abs_input = np.where(positive, a, wrap_i32(-a))
    if_positive = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(wrap_i32(-abs_input), integer_bits))
    if_negative = wrap_i32(INT32_MAX - if_positive)
    return np.where(a == 0, 1 << 30, np.where(positive, if_positive, if_negative))


def tanh(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp::tanh; input with ``integer_bits``, result with 0."""
    a = np.asarray(a, dtype=np.int64)
    negative = a < 0
    n = np.where(negative, a, wrap_i32(-a))
    # ExactMulByPot<1>: same raw value read with one more integer bit.
    t = _one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, integer_bits + 1))
    return np.where(a == 0, 0, np.where(negative, wrap_i32(-t), t))


def get_reciprocal(x: np.ndarray, x_integer_digits: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLM's GetReciprocal: (1/x as Q0.31 scaled, num_bits_over_unit), for x > 0."""
    x = np.asarray(x, dtype=np.int64)
    u = x & 0xFFFFFFFF
    # count-leading-zeros of a uint32: 32 - bit_length; frexp's exponent is
    # the bit length for integers (exact below 2**53).
    headroom_plus_one = 32 - np.frexp(u.astype(np.float64))[1].astype(np.int64)
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted = (u << headroom_plus_one) & 0xFFFFFFFF
    shifted_sum_minus_one = wrap_i32((shifted - (1 << 31)) & 0xFFFFFFFF)
    return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one), num_bits_over_unit
