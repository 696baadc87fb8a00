/*
 * The fixed-point arithmetic TFLM's integer kernels share, written once for
 * every device's C (the host reference kernels, cmsis-nn, woofles, exported
 * firmware).  Header-only, C99, integer only.  The 32-bit requantization
 * (MultiplyByQuantizedMultiplier for int32) is quant.h's; this header adds:
 *
 *  - two's-complement wrapping of int32/int64 sums, saturating helpers,
 *    floor shifts and AVERAGE_POOL_2D's rounded division, so C's undefined
 *    signed overflow and implementation-defined signed right shift never
 *    matter;
 *  - TFLM's 64-bit MultiplyByQuantizedMultiplier (kernels/internal/common.h);
 *  - gemmlowp's fixed-point functions (fixedpoint/fixedpoint.h) as TFLM's int8
 *    SOFTMAX, LOG_SOFTMAX, LOGISTIC and TANH use them, on raw int32 values;
 *  - TFLM's int16 sigmoid/tanh table (sigmoid_table_uint16) and its
 *    interpolation (reference_integer_ops::Logistic/Tanh for int16), and the
 *    513-entry LUT lookup of SoftmaxInt16 (common.h's LUTLookup).
 *
 * Where TFLM's C++ adds int32 or int64 values that may overflow, the sums here
 * wrap through the unsigned type: the same bits as TFLM's compiled code, with
 * defined behaviour.  Every function is static inline: each kernel file gets
 * its own copy and the compiler folds constant arguments.
 */
#ifndef TVMDEVICE_FIXEDPOINT_H_
#define TVMDEVICE_FIXEDPOINT_H_

#include <stdint.h>

#include "tvmdevice/quant.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ wrapping */

/* The int32 whose two's-complement bits are u. */
static inline int32_t tvmd_wrap_i32(uint32_t u) {
  return u <= (uint32_t)INT32_MAX ? (int32_t)u : (int32_t)(u - 2147483648u) - INT32_MAX - 1;
}

/* The int64 whose two's-complement bits are u. */
static inline int64_t tvmd_wrap_i64(uint64_t u) {
  return u <= (uint64_t)INT64_MAX ? (int64_t)u : (int64_t)(u - ((uint64_t)INT64_MAX + 1u)) - INT64_MAX - 1;
}

/* a + b and a - b modulo 2^32, as TFLM's int32 arithmetic overflows in practice. */
static inline int32_t tvmd_add_wrap_i32(int32_t a, int32_t b) { return tvmd_wrap_i32((uint32_t)a + (uint32_t)b); }
static inline int32_t tvmd_sub_wrap_i32(int32_t a, int32_t b) { return tvmd_wrap_i32((uint32_t)a - (uint32_t)b); }

/* ---------------------------------------------------------- saturation */

/* a + b and a - b clamped to int32 (gemmlowp's SaturatingAdd / SaturatingSub). */
static inline int32_t tvmd_saturating_add_i32(int32_t a, int32_t b) {
  const int64_t s = (int64_t)a + (int64_t)b;
  return (int32_t)(s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : s));
}

static inline int32_t tvmd_saturating_sub_i32(int32_t a, int32_t b) {
  const int64_t s = (int64_t)a - (int64_t)b;
  return (int32_t)(s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : s));
}

/* x clamped to int16. */
static inline int16_t tvmd_sat_i16(int32_t x) { return (int16_t)tvmd_clamp_i32(x, INT16_MIN, INT16_MAX); }

/* -------------------------------------------------------------- shifts */

/* floor(x / 2^n), 0 <= n < 32: C++'s arithmetic x >> n, defined for negative x. */
static inline int32_t tvmd_floor_shift_i32(int32_t x, int n) {
  return x >= 0 ? x >> n : -1 - ((-1 - x) >> n);
}

/* floor(x / 2^n), 0 <= n < 64. */
static inline int64_t tvmd_floor_shift_i64(int64_t x, int n) {
  return x >= 0 ? x >> n : -1 - ((-1 - x) >> n);
}

/* sum / count rounded to nearest, halves away from zero (count > 0): TFLM's
 * AVERAGE_POOL_2D rounding, (sum +- count / 2) / count with C's truncating
 * division. */
static inline int32_t tvmd_rounded_average_i32(int32_t sum, int32_t count) {
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

/* The number of leading zero bits of u (32 for 0): TFLM's CountLeadingZeros. */
static inline int tvmd_count_leading_zeros_u32(uint32_t u) {
  int n = 0;
  while (n < 32 && (u & (0x80000000u >> n)) == 0) ++n;
  return n;
}

/* ---------------------------------------------- 64-bit requantization */

/* TFLM's MultiplyByQuantizedMultiplier(int64_t x, int32_t multiplier, int shift)
 * (kernels/internal/common.h), the int16x8 kernels' requantization: the Q31
 * multiplier (>= 0) rounded to Q15 (0x7FFF at most), one rounding shift right
 * by 15 - shift, the result truncated to int32 as TFLM's static_cast does.
 *
 * Valid shifts: -31 <= shift <= 14.  TFLM debug-asserts [-31, 7], which the
 * operator layer enforces for LSTM (ops/_recurrent.py); its int16 CONV_2D,
 * DEPTHWISE_CONV_2D and FULLY_CONNECTED admit shifts up to 14 (ops/int16/
 * conv.py MAX_WIDE_SHIFT): release TFLM computes those too, and 15 - shift >= 1
 * is all the arithmetic needs (the rounding term 2^(14 - shift)).  The product
 * is formed modulo 2^64: for TFLM's asserted |x| < 2^47 it never wraps (the
 * exact product), and outside it the bits are those of TFLM's int64
 * multiply, without its undefined overflow. */
static inline int32_t tvmd_multiply_by_quantized_multiplier_64(int64_t x, int32_t multiplier, int32_t shift) {
  const int64_t reduced = multiplier < 0x7FFF0000 ? ((int64_t)multiplier + (1 << 15)) >> 16 : 0x7FFF;
  const int total_shift = 15 - (int)shift;
  const uint64_t rounded = (uint64_t)x * (uint64_t)reduced + ((uint64_t)1 << (total_shift - 1));
  return tvmd_wrap_i32((uint32_t)(uint64_t)tvmd_floor_shift_i64(tvmd_wrap_i64(rounded), total_shift));
}

/* ------------------------------------------- gemmlowp's fixed point
 * A raw int32 with k integer bits represents raw / 2^(31 - k). */

#define TVMD_FP_ONE_Q0 INT32_MAX /* 1.0 with 0 integer bits, saturated */

/* SaturatingRoundingDoublingHighMul (quant.h). */
static inline int32_t tvmd_fp_mul(int32_t a, int32_t b) { return tvmd_sat_rounding_doubling_high_mul(a, b); }

/* -a, wrapping (INT32_MIN stays INT32_MIN as gemmlowp's int32 negation). */
static inline int32_t tvmd_fp_neg(int32_t a) { return tvmd_wrap_i32(0u - (uint32_t)a); }

/* SaturatingRoundingMultiplyByPOT: a saturating left shift (exponent > 0,
 * exponent < 32), or quant.h's rounding right shift (exponent < 0, > -32). */
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

/* exp_on_interval_between_negative_one_quarter_and_0_excl: exp(a) for a in
 * [-1/4, 0), 0 integer bits in and out; Taylor series around -1/8. */
static inline int32_t tvmd_fp_exp_on_interval(int32_t a) {
  const int32_t constant_term = 1895147668;    /* exp(-1/8) */
  const int32_t constant_1_over_3 = 715827883; /* 1/3 */
  const int32_t x = tvmd_add_wrap_i32(a, 1 << 28); /* a + 1/8 */
  const int32_t x2 = tvmd_fp_mul(x, x);
  const int32_t x3 = tvmd_fp_mul(x2, x);
  const int32_t x4 = tvmd_fp_mul(x2, x2);
  const int32_t x4_over_4 = tvmd_rounding_divide_by_pot(x4, 2);
  const int32_t poly = tvmd_rounding_divide_by_pot(
      tvmd_add_wrap_i32(tvmd_fp_mul(tvmd_add_wrap_i32(x4_over_4, x3), constant_1_over_3), x2), 1);
  return tvmd_add_wrap_i32(constant_term, tvmd_fp_mul(constant_term, tvmd_add_wrap_i32(x, poly)));
}

/* exp_on_negative_values: exp(a) for a <= 0 with integer_bits (1..6) integer
 * bits; the result has 0 integer bits.  The fractional quarter goes through
 * the Taylor series, each integer bit of -a (and the two quarter bits) through
 * the barrel shifter's factor exp(-2^k). */
static inline int32_t tvmd_fp_exp_on_negative_values(int32_t a, int integer_bits) {
  /* exp(-2^k) in Q0.31 for k = -2..4. */
  static const int32_t barrel[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  const int frac = 31 - integer_bits;
  const int32_t one_quarter = (int32_t)1 << (frac - 2);
  const int32_t a_mod_quarter_minus_one_quarter = tvmd_sub_wrap_i32(a & (one_quarter - 1), one_quarter);
  int32_t result = tvmd_fp_exp_on_interval(tvmd_fp_mul_by_pot(a_mod_quarter_minus_one_quarter, integer_bits));
  const int32_t remainder = tvmd_sub_wrap_i32(a_mod_quarter_minus_one_quarter, a);
  for (int k = -2; k <= 4; ++k) {
    if (integer_bits > k && (remainder & ((int32_t)1 << (frac + k))) != 0) {
      result = tvmd_fp_mul(result, barrel[k + 2]);
    }
  }
  if (integer_bits > 5 && a < -((int32_t)1 << (36 - integer_bits))) result = 0; /* below -32 */
  return a == 0 ? TVMD_FP_ONE_Q0 : result;
}

/* Newton-Raphson for 1 / half_denominator, half_denominator in [1/2, 1) with
 * 0 integer bits; the result has 2 integer bits (three iterations from
 * 48/17 - 32/17 d, as gemmlowp). */
static inline int32_t tvmd_fp_newton_reciprocal(int32_t half_denominator) {
  const int32_t one_q2 = 1 << 29;
  int32_t x = tvmd_add_wrap_i32(1515870810, tvmd_fp_mul(half_denominator, -1010580540));
  for (int i = 0; i < 3; ++i) {
    const int32_t one_minus = tvmd_sub_wrap_i32(one_q2, tvmd_fp_mul(half_denominator, x));
    x = tvmd_add_wrap_i32(x, tvmd_fp_mul_by_pot(tvmd_fp_mul(x, one_minus), 2));
  }
  return x;
}

/* one_over_one_plus_x_for_x_in_0_1: 1 / (1 + a), a in [0, 1), 0 integer bits in and out. */
static inline int32_t tvmd_fp_one_over_one_plus_x(int32_t a) {
  const int32_t x = tvmd_fp_newton_reciprocal(tvmd_fp_rounding_half_sum(a, TVMD_FP_ONE_Q0));
  return tvmd_fp_mul_by_pot(x, 1);
}

/* one_minus_x_over_one_plus_x_for_x_in_0_1: (1 - a) / (1 + a), a in [0, 1), 0 integer bits in and out. */
static inline int32_t tvmd_fp_one_minus_x_over_one_plus_x(int32_t a) {
  const int32_t x = tvmd_fp_newton_reciprocal(tvmd_fp_rounding_half_sum(a, TVMD_FP_ONE_Q0));
  return tvmd_fp_mul_by_pot(tvmd_sub_wrap_i32(x, 1 << 29), 2);
}

/* gemmlowp::logistic: input with integer_bits, result with 0. */
static inline int32_t tvmd_fp_logistic(int32_t a, int integer_bits) {
  if (a == 0) return 1 << 30; /* 1/2 */
  const int32_t abs_a = a > 0 ? a : tvmd_fp_neg(a);
  const int32_t if_positive =
      tvmd_fp_one_over_one_plus_x(tvmd_fp_exp_on_negative_values(tvmd_fp_neg(abs_a), integer_bits));
  return a > 0 ? if_positive : tvmd_sub_wrap_i32(TVMD_FP_ONE_Q0, if_positive);
}

/* gemmlowp::tanh: input with integer_bits, result with 0. */
static inline int32_t tvmd_fp_tanh(int32_t a, int integer_bits) {
  if (a == 0) return 0;
  const int32_t n = a < 0 ? a : tvmd_fp_neg(a);
  /* ExactMulByPot<1>: the same raw value read with one more integer bit. */
  const int32_t t = tvmd_fp_one_minus_x_over_one_plus_x(tvmd_fp_exp_on_negative_values(n, integer_bits + 1));
  return a < 0 ? tvmd_fp_neg(t) : t;
}

/* TFLM's GetReciprocal (common.h): 1/x as a Q0.31 scale and, in
 * *num_bits_over_unit, the bits x (with x_integer_digits) has over 1.0; x > 0. */
static inline int32_t tvmd_fp_get_reciprocal(int32_t x, int x_integer_digits, int* num_bits_over_unit) {
  const uint32_t u = (uint32_t)x;
  const int headroom_plus_one = tvmd_count_leading_zeros_u32(u);
  *num_bits_over_unit = x_integer_digits - headroom_plus_one;
  const uint32_t shifted = headroom_plus_one < 32 ? u << headroom_plus_one : 0u;
  return tvmd_fp_one_over_one_plus_x(tvmd_wrap_i32(shifted - 0x80000000u));
}

/* ------------------------------------------ int16 LOGISTIC and TANH
 * TFLM's reference_integer_ops::Logistic and Tanh for int16
 * (reference/integer_ops/logistic.h, tanh.h): the input rescaled to 3 * 4096
 * steps per unit, the result interpolated between entries of a table of
 * sigmoid(i / 24) in unsigned Q0.16 (tanh(x) = 2 sigmoid(2x) - 1 reads the
 * same table at twice the step); Q0.15 out. */

/* TFLM's sigmoid_table_uint16 (its values, not a rounding of the formula). */
static const uint16_t tvmd_sigmoid_table_u16[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535};

/* The table at a / 2^frac_bits (a >= 0), scaled by 2^frac_bits and linear
 * between entries; `saturated` from the last entry on. */
static inline uint32_t tvmd_sigmoid_table_lookup(uint32_t a, int frac_bits, uint32_t saturated) {
  const uint32_t index = a >> frac_bits;
  if (index >= 255u) return saturated;
  const uint32_t lo = tvmd_sigmoid_table_u16[index];
  const uint32_t hi = tvmd_sigmoid_table_u16[index + 1u];
  return (lo << frac_bits) + (a & ((1u << frac_bits) - 1u)) * (hi - lo);
}

/* The input's rescale, (x * multiplier + 2^(shift - 1)) >> shift with a floor
 * shift (0 <= shift < 32; no rounding term for shift 0).  The caller keeps
 * x * multiplier within int32 (int16 x at most 32767 times the multiplier). */
static inline int32_t tvmd_rescale_s16(int32_t x, int32_t multiplier, int32_t shift) {
  const int32_t round = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
  return tvmd_floor_shift_i32(x * multiplier + round, (int)shift);
}

/* Logistic of v (the rescaled input, 3 * 4096 steps per unit): Q0.15 in [0, 32767]. */
static inline int16_t tvmd_logistic_s16(int32_t v) {
  uint32_t r = tvmd_sigmoid_table_lookup((uint32_t)(v < 0 ? -v : v), 9, 0x7FFFu << 10);
  r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
  return (int16_t)(int32_t)(r >> 10);
}

/* Tanh of v (the rescaled input, 3 * 4096 steps per unit): Q0.15 in [-32767, 32767]. */
static inline int16_t tvmd_tanh_s16(int32_t v) {
  const int32_t r = (int32_t)tvmd_sigmoid_table_lookup((uint32_t)(v < 0 ? -v : v), 8, 0xFFFFu << 8);
  const int32_t t = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
  return (int16_t)tvmd_floor_shift_i32(t, 8);
}

/* --------------------------------------------------- SoftmaxInt16's LUT */

/* TFLM's LUTLookup for a 513-entry int16 table (LUTPopulate's): 512
 * intervals of 128 inputs, interpolated in Q0.7. */
static inline int16_t tvmd_lut_lookup_s16(int16_t value, const int16_t* lut) {
  const int32_t index = ((int32_t)value + 32768) >> 7; /* 256 + floor(value / 128) */
  const int32_t offset = (int32_t)value & 0x7f;
  const int32_t base = lut[index];
  const int32_t slope = (int32_t)lut[index + 1] - base;
  return (int16_t)(base + tvmd_floor_shift_i32(slope * offset + 64, 7));
}

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_FIXEDPOINT_H_ */
