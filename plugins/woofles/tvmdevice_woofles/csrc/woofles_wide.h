/*
 * The 64-bit arithmetic of the int16x8 layers (-acc_bits=64): int64 sums
 * wrap through uint64 like TFLM's int64 accumulators, without C's undefined
 * signed overflow, and the 64-bit requantization is TFLM's
 * MultiplyByQuantizedMultiplier(int64_t, int32_t, int) (one rounding, the
 * multiplier reduced to 16 bits), with a floor shift defined for negative
 * values.  Internal to the kernels.
 */
#ifndef TVMD_WOOFLES_WIDE_H_
#define TVMD_WOOFLES_WIDE_H_

#include <stdint.h>

#include "woofles_tile.h"

/* The int64 whose two's-complement bits are u. */
static inline int64_t woofles_i64(uint64_t u) {
  return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

/* The int32 whose two's-complement bits are u. */
static inline int32_t woofles_i32(uint32_t u) {
  return u <= (uint32_t)INT32_MAX ? (int32_t)u : -(int32_t)(~u) - 1;
}

/* floor(x / 2^n), 0 <= n < 64. */
static inline int64_t woofles_floor_shift64(int64_t x, int n) {
  return x >= 0 ? x >> n : -1 - ((-1 - x) >> n);
}

/* TFLM's 64-bit MultiplyByQuantizedMultiplier, shift <= 14 (checked in the
 * operator layer); the result is truncated to int32 as TFLM's cast does. */
static inline int32_t woofles_requantize64(int64_t x, int32_t multiplier, int32_t shift) {
  const int64_t reduced = multiplier < 0x7FFF0000 ? ((int64_t)multiplier + (1 << 15)) >> 16 : 0x7FFF;
  const int total_shift = 15 - (int)shift;
  const uint64_t rounded = (uint64_t)x * (uint64_t)reduced + ((uint64_t)1 << (total_shift - 1));
  return woofles_i32((uint32_t)(uint64_t)woofles_floor_shift64(woofles_i64(rounded), total_shift));
}

/* Finish one int16x8 output tile of `lanes` channels from channel c0: add
 * the bias in the accumulation's width (bias_bits 64: int64 bias, 64-bit
 * requantization; 32: int32 bias, the low 32 bits, 32-bit requantization),
 * clamp, store int16 (zero points are 0). */
static inline void woofles_store_tile16(const uint64_t* acc, int32_t lanes, int32_t c0, const uint8_t* bias,
                                        int32_t bias_bits, const int32_t* multiplier, const int32_t* shift,
                                        int32_t act_min, int32_t act_max, uint8_t* out) {
  for (int32_t l = 0; l < lanes; ++l) {
    const int32_t c = c0 + l;
    int32_t y;
    if (bias_bits == 64) {
      uint64_t raw = acc[l];
      if (bias != NULL) {
        int64_t b;
        memcpy(&b, bias + (size_t)c * sizeof(b), sizeof(b));
        raw += (uint64_t)b;
      }
      y = woofles_requantize64(woofles_i64(raw), multiplier[c], shift[c]);
    } else {
      uint32_t raw = (uint32_t)acc[l];
      if (bias != NULL) raw += (uint32_t)woofles_load_i32(bias, c);
      y = tvmd_multiply_by_quantized_multiplier(woofles_i32(raw), multiplier[c], shift[c]);
    }
    woofles_store_elem(out, (size_t)c, 1, tvmd_clamp_i32(y, act_min, act_max));
  }
}

#endif /* TVMD_WOOFLES_WIDE_H_ */
