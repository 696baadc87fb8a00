/*
 * The 64-bit arithmetic of the int16x8 kernels (CMSIS-NN's s16 family),
 * without C's undefined signed overflow: int64 sums wrap through uint64 (as
 * TFLM's int64 additions wrap in practice), and the 64-bit requantization
 * (CMSIS-NN's arm_nn_requantize_s64, TFLM's MultiplyByQuantizedMultiplier
 * for int64) is tvmdevice/fixedpoint.h's.
 */
#ifndef TVMD_CMSIS_S16_H_
#define TVMD_CMSIS_S16_H_

#include "internal.h"
#include "mprofile.h"

/* TFLM's 64-bit MultiplyByQuantizedMultiplier, tvmdevice/fixedpoint.h's
 * (shifts -31..14; the operator layer checks them at prepare): on an
 * M-profile core with DSP or Helium, requantize_m.h's UMULL form, proven
 * equal by tests/test_requantize.py. */
static inline int32_t tvmd_cmsis_requantize_s64(int64_t x, int32_t multiplier, int32_t shift) {
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
  return tvmd_cmsis_requantize_s64_m(x, multiplier, shift);
#else
  return tvmd_multiply_by_quantized_multiplier_64(x, multiplier, shift);
#endif
}

/* One output of a weighted s16 kernel: the raw sum (its low 32 bits are the
 * int32 accumulator) plus the bias of the bias's width, requantized at that
 * width and clamped.  bias is int64 (bias_bits 64) or int32 (32), or NULL. */
static inline int16_t tvmd_cmsis_output_s16(uint64_t acc, int32_t bias_bits, const void* bias, int32_t channel,
                                            int32_t multiplier, int32_t shift, int32_t act_min, int32_t act_max) {
  int32_t y;
  if (bias_bits == 64) {
    if (bias != NULL) acc += (uint64_t)((const int64_t*)bias)[channel];
    y = tvmd_cmsis_requantize_s64(tvmd_wrap_i64(acc), multiplier, shift);
  } else {
    uint32_t acc32 = (uint32_t)acc;
    if (bias != NULL) acc32 += (uint32_t)((const int32_t*)bias)[channel];
    y = tvmd_multiply_by_quantized_multiplier(tvmd_wrap_i32(acc32), multiplier, shift);
  }
  return (int16_t)tvmd_cmsis_min(tvmd_cmsis_max(y, act_min), act_max);
}

#endif /* TVMD_CMSIS_S16_H_ */
