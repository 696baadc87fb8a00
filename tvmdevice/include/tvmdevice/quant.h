/*
 * Shared int8 requantization math with TensorFlow Lite Micro reference
 * semantics ("double rounding"): a saturating rounding doubling high multiply
 * followed by a rounding divide by a power of two.  Header-only, C99.
 */
#ifndef TVMDEVICE_QUANT_H_
#define TVMDEVICE_QUANT_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* (a * b * 2) >> 32 with round-half-away-from-zero, saturating the single
 * overflowing case INT32_MIN * INT32_MIN.
 *
 * The reference adds a nudge (2^30, or 1 - 2^30 when a*b < 0) and divides by
 * 2^31 truncating toward zero.  That equals floor((a*b + 2^30) / 2^31) for
 * every a*b: when a*b < 0, truncation is floor after adding 2^31 - 1, and
 * (1 - 2^30) + (2^31 - 1) = 2^30.  A floor division by 2^31 is a shift; done
 * as a logical shift of the two's-complement bits (keeping bits 31..62) it
 * avoids C's implementation-defined signed shift, and unlike the division it
 * vectorizes. */
static inline int32_t tvmd_sat_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  const int64_t ab = (int64_t)a * (int64_t)b;
  return (int32_t)(uint32_t)((uint64_t)(ab + ((int64_t)1 << 30)) >> 31);
}

/* x / 2^exponent rounded to nearest, ties away from zero. */
static inline int32_t tvmd_rounding_divide_by_pot(int32_t x, int exponent) {
  const int32_t mask = (int32_t)((((int64_t)1) << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* x * multiplier * 2^shift, multiplier being a Q31 value in [0.5, 1). */
static inline int32_t tvmd_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier,
                                                            int shift) {
  const int left_shift = shift > 0 ? shift : 0;
  const int right_shift = shift > 0 ? 0 : -shift;
  const int32_t shifted = (int32_t)((uint32_t)x << left_shift);
  return tvmd_rounding_divide_by_pot(tvmd_sat_rounding_doubling_high_mul(shifted, multiplier),
                                     right_shift);
}

static inline int32_t tvmd_clamp_i32(int32_t x, int32_t lo, int32_t hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_QUANT_H_ */
