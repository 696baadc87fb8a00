/*
 * The 64-bit arithmetic of the int16x8 kernels (CMSIS-NN's s16 family),
 * without C's undefined signed overflow: int64 sums wrap through uint64 (as
 * TFLM's int64 additions wrap in practice), and the 64-bit requantization
 * (CMSIS-NN's arm_nn_requantize_s64, TFLM's MultiplyByQuantizedMultiplier
 * for int64: the multiplier reduced to 16 bits, one rounding) shifts with a
 * floor that is defined for negative values.
 */
#ifndef TVMD_CMSIS_S16_H_
#define TVMD_CMSIS_S16_H_

#include "internal.h"
#include "mprofile.h"

/* The int64 whose two's-complement bits are u. */
static inline int64_t tvmd_cmsis_wrap64(uint64_t u) {
  return u <= (uint64_t)INT64_MAX ? (int64_t)u : (int64_t)(u - ((uint64_t)INT64_MAX + 1u)) - INT64_MAX - 1;
}

/* The int32 whose two's-complement bits are u. */
static inline int32_t tvmd_cmsis_wrap32(uint32_t u) {
  return u <= (uint32_t)INT32_MAX ? (int32_t)u : (int32_t)(u - ((uint32_t)INT32_MAX + 1u)) - INT32_MAX - 1;
}

/* floor(x / 2^n) for 0 <= n < 64. */
static inline int64_t tvmd_cmsis_floor_shift64(int64_t x, int n) {
  return x >= 0 ? x >> n : -1 - ((-1 - x) >> n);
}

/* x * multiplier / 2^(31 - shift), rounded half up, for shift <= 14 (checked
 * at prepare): the multiplier reduced to Q15 first; truncated to int32 as
 * TFLM's cast does. */
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
/* The same integers on a 32-bit M-profile core (GCC or Clang: signed right
 * shifts are arithmetic, conversions to a narrower signed type wrap): the
 * reduced multiplier fits 16 bits, so the product is one UMULL and two MLAs
 * modulo 2^64; the floor is the arithmetic shift, without the portable
 * form's branch. */
static inline int32_t tvmd_cmsis_requantize_s64(int64_t x, int32_t multiplier, int32_t shift) {
  const int32_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
  const int total_shift = 15 - (int)shift;
  const uint64_t rounded = (uint64_t)x * (uint64_t)(int64_t)reduced + ((uint64_t)1 << (total_shift - 1));
  return (int32_t)((int64_t)rounded >> total_shift);
}
#else
static inline int32_t tvmd_cmsis_requantize_s64(int64_t x, int32_t multiplier, int32_t shift) {
  const int64_t reduced = multiplier < 0x7FFF0000 ? ((int64_t)multiplier + (1 << 15)) >> 16 : 0x7FFF;
  const int total_shift = 15 - (int)shift;
  const uint64_t rounded = (uint64_t)x * (uint64_t)reduced + ((uint64_t)1 << (total_shift - 1));
  return tvmd_cmsis_wrap32((uint32_t)(uint64_t)tvmd_cmsis_floor_shift64(tvmd_cmsis_wrap64(rounded), total_shift));
}
#endif

/* One output of a weighted s16 kernel: the raw sum (its low 32 bits are the
 * int32 accumulator) plus the bias of the bias's width, requantized at that
 * width and clamped.  bias is int64 (bias_bits 64) or int32 (32), or NULL. */
static inline int16_t tvmd_cmsis_output_s16(uint64_t acc, int32_t bias_bits, const void* bias, int32_t channel,
                                            int32_t multiplier, int32_t shift, int32_t act_min, int32_t act_max) {
  int32_t y;
  if (bias_bits == 64) {
    if (bias != NULL) acc += (uint64_t)((const int64_t*)bias)[channel];
    y = tvmd_cmsis_requantize_s64(tvmd_cmsis_wrap64(acc), multiplier, shift);
  } else {
    uint32_t acc32 = (uint32_t)acc;
    if (bias != NULL) acc32 += (uint32_t)((const int32_t*)bias)[channel];
    y = tvmd_multiply_by_quantized_multiplier(tvmd_cmsis_wrap32(acc32), multiplier, shift);
  }
  return (int16_t)tvmd_cmsis_min(tvmd_cmsis_max(y, act_min), act_max);
}

#endif /* TVMD_CMSIS_S16_H_ */
