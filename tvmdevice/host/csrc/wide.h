/*
 * The 64-bit arithmetic of TFLM's int16x8 kernels, without C's undefined or
 * implementation-defined signed overflows and shifts: int64 sums wrap
 * through uint64, and TFLM's 64-bit MultiplyByQuantizedMultiplier (one
 * rounding with the multiplier reduced to 16 bits) shifts with a floor that
 * is defined for negative values.
 */
#ifndef TVMD_C_WIDE_H_
#define TVMD_C_WIDE_H_

#include "internal.h"

/* The int64 whose two's-complement bits are u. */
static inline int64_t tvmd_c_wrap64(uint64_t u) {
  return u <= (uint64_t)INT64_MAX ? (int64_t)u : (int64_t)(u - ((uint64_t)INT64_MAX + 1u)) - INT64_MAX - 1;
}

/* floor(x / 2^n) for 0 <= n < 64 (an arithmetic right shift). */
static inline int64_t tvmd_c_floor_shift64(int64_t x, int n) {
  return x >= 0 ? x >> n : -1 - ((-1 - x) >> n);
}

/* TFLM's MultiplyByQuantizedMultiplier(int64_t x, multiplier, shift), shift <= 14;
 * the result is truncated to int32 as TFLM's cast does. */
static inline int32_t tvmd_c_requantize64(int64_t x, int32_t multiplier, int32_t shift) {
  const int64_t reduced = multiplier < 0x7FFF0000 ? ((int64_t)multiplier + (1 << 15)) >> 16 : 0x7FFF;
  const int total_shift = 15 - (int)shift;
  const uint64_t rounded = (uint64_t)x * (uint64_t)reduced + ((uint64_t)1 << (total_shift - 1));
  return tvmd_c_wrap((uint32_t)(uint64_t)tvmd_c_floor_shift64(tvmd_c_wrap64(rounded), total_shift));
}

#endif /* TVMD_C_WIDE_H_ */
