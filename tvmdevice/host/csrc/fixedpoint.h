/*
 * gemmlowp's fixed-point arithmetic (fixedpoint.h) on int32 raw values, as
 * TFLM's int8 SOFTMAX, LOGISTIC and TANH reference kernels use it.  A value
 * with k integer bits represents raw / 2^(31 - k).  Additions that the C++
 * code does on plain int32 wrap here through uint32, so overflow is defined.
 */
#ifndef TVMD_C_FIXEDPOINT_H_
#define TVMD_C_FIXEDPOINT_H_

#include "internal.h"

#define TVMD_FP_ONE_Q0 INT32_MAX /* 1.0 with 0 integer bits, saturated */

static inline int32_t tvmd_fp_mul(int32_t a, int32_t b) { return tvmd_sat_rounding_doubling_high_mul(a, b); }

static inline int32_t tvmd_fp_neg(int32_t a) { return tvmd_c_wrap(0u - (uint32_t)a); }

/* SaturatingRoundingMultiplyByPOT: saturating left shift, or rounding right shift. */
static inline int32_t tvmd_fp_mul_by_pot(int32_t x, int exponent) {
  if (exponent > 0) {
    const int32_t threshold = (int32_t)(((uint32_t)1 << (31 - exponent)) - 1u);
    if (x > threshold) return INT32_MAX;
    if (x < -threshold) return INT32_MIN;
    return (int32_t)((uint32_t)x << exponent);
  }
  return exponent < 0 ? tvmd_rounding_divide_by_pot(x, -exponent) : x;
}

/* RoundingHalfSum: (a + b) / 2 rounded half away from zero. */
static inline int32_t tvmd_fp_rounding_half_sum(int32_t a, int32_t b) {
  const int64_t sum = (int64_t)a + (int64_t)b;
  return (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
}

/* exp(a) for a in [-1/4, 0), 0 integer bits in and out: Taylor series around -1/8. */
static inline int32_t tvmd_fp_exp_on_interval(int32_t a) {
  const int32_t constant_term = 1895147668;     /* exp(-1/8) */
  const int32_t constant_1_over_3 = 715827883;  /* 1/3 */
  const int32_t x = tvmd_c_add_wrap(a, 1 << 28); /* a + 1/8 */
  const int32_t x2 = tvmd_fp_mul(x, x);
  const int32_t x3 = tvmd_fp_mul(x2, x);
  const int32_t x4 = tvmd_fp_mul(x2, x2);
  const int32_t x4_over_4 = tvmd_rounding_divide_by_pot(x4, 2);
  const int32_t poly = tvmd_rounding_divide_by_pot(
      tvmd_c_add_wrap(tvmd_fp_mul(tvmd_c_add_wrap(x4_over_4, x3), constant_1_over_3), x2), 1);
  return tvmd_c_add_wrap(constant_term, tvmd_fp_mul(constant_term, tvmd_c_add_wrap(x, poly)));
}

/* exp(a) for a <= 0 given with integer_bits (1..6); the result has 0 integer bits. */
static inline int32_t tvmd_fp_exp_on_negative_values(int32_t a, int integer_bits) {
  /* exp(-2^k) in Q0.31 for k = -2..4: the barrel shifter's factors. */
  static const int32_t barrel[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  const int frac = 31 - integer_bits;
  const int32_t one_quarter = (int32_t)1 << (frac - 2);
  const int32_t a_mod_quarter_minus_one_quarter = tvmd_c_wrap((uint32_t)(a & (one_quarter - 1)) -
                                                               (uint32_t)one_quarter);
  int32_t result = tvmd_fp_exp_on_interval(tvmd_fp_mul_by_pot(a_mod_quarter_minus_one_quarter, integer_bits));
  const int32_t remainder = tvmd_c_wrap((uint32_t)a_mod_quarter_minus_one_quarter - (uint32_t)a);
  for (int k = -2; k <= 4; ++k) {
    if (integer_bits > k && (remainder & ((int32_t)1 << (frac + k))) != 0) {
      result = tvmd_fp_mul(result, barrel[k + 2]);
    }
  }
  if (integer_bits > 5 && a < -((int32_t)1 << (36 - integer_bits))) result = 0; /* below -32 */
  return a == 0 ? TVMD_FP_ONE_Q0 : result;
}

/* Newton-Raphson for 1 / half_denominator, half_denominator in [1/2, 1); 2 integer bits out. */
static inline int32_t tvmd_fp_newton_reciprocal(int32_t half_denominator) {
  const int32_t one_q2 = 1 << 29;
  int32_t x = tvmd_c_add_wrap(1515870810, tvmd_fp_mul(half_denominator, -1010580540)); /* 48/17 - 32/17 d */
  for (int i = 0; i < 3; ++i) {
    const int32_t one_minus = tvmd_c_wrap((uint32_t)one_q2 - (uint32_t)tvmd_fp_mul(half_denominator, x));
    x = tvmd_c_add_wrap(x, tvmd_fp_mul_by_pot(tvmd_fp_mul(x, one_minus), 2));
  }
  return x;
}

/* 1 / (1 + a) for a in [0, 1), 0 integer bits in and out. */
static inline int32_t tvmd_fp_one_over_one_plus_x(int32_t a) {
  const int32_t x = tvmd_fp_newton_reciprocal(tvmd_fp_rounding_half_sum(a, TVMD_FP_ONE_Q0));
  return tvmd_fp_mul_by_pot(x, 1);
}

/* (1 - a) / (1 + a) for a in [0, 1), 0 integer bits in and out. */
static inline int32_t tvmd_fp_one_minus_x_over_one_plus_x(int32_t a) {
  const int32_t x = tvmd_fp_newton_reciprocal(tvmd_fp_rounding_half_sum(a, TVMD_FP_ONE_Q0));
  return tvmd_fp_mul_by_pot(tvmd_c_wrap((uint32_t)x - (1u << 29)), 2);
}

/* gemmlowp::logistic: input with integer_bits, result with 0. */
static inline int32_t tvmd_fp_logistic(int32_t a, int integer_bits) {
  if (a == 0) return 1 << 30; /* 1/2 */
  const int32_t abs_a = a > 0 ? a : tvmd_fp_neg(a);
  const int32_t if_positive =
      tvmd_fp_one_over_one_plus_x(tvmd_fp_exp_on_negative_values(tvmd_fp_neg(abs_a), integer_bits));
  return a > 0 ? if_positive : tvmd_c_wrap((uint32_t)TVMD_FP_ONE_Q0 - (uint32_t)if_positive);
}

/* gemmlowp::tanh: input with integer_bits, result with 0. */
static inline int32_t tvmd_fp_tanh(int32_t a, int integer_bits) {
  if (a == 0) return 0;
  const int32_t n = a < 0 ? a : tvmd_fp_neg(a);
  /* ExactMulByPot<1>: the same raw value read with one more integer bit. */
  const int32_t t = tvmd_fp_one_minus_x_over_one_plus_x(tvmd_fp_exp_on_negative_values(n, integer_bits + 1));
  return a < 0 ? tvmd_fp_neg(t) : t;
}

/* TFLM's GetReciprocal: 1/x as a Q0.31 scale and the bits x has over 1.0, for x > 0. */
static inline int32_t tvmd_fp_get_reciprocal(int32_t x, int x_integer_digits, int* num_bits_over_unit) {
  const uint32_t u = (uint32_t)x;
  int headroom_plus_one = 0;
  while (headroom_plus_one < 32 && (u & (0x80000000u >> headroom_plus_one)) == 0) ++headroom_plus_one;
  *num_bits_over_unit = x_integer_digits - headroom_plus_one;
  const uint32_t shifted = headroom_plus_one < 32 ? u << headroom_plus_one : 0u;
  return tvmd_fp_one_over_one_plus_x(tvmd_c_wrap(shifted - 0x80000000u));
}

#endif /* TVMD_C_FIXEDPOINT_H_ */
