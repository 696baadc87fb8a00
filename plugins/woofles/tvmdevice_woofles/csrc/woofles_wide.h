/*
 * The 64-bit arithmetic of the int16x8 layers (-acc_bits=64): int64 sums
 * wrap through uint64 like TFLM's int64 accumulators, without C's undefined
 * signed overflow, and the 64-bit requantization is TFLM's
 * MultiplyByQuantizedMultiplier(int64_t, int32_t, int), tvmdevice/fixedpoint.h's
 * (shifts -31..14, checked in the operator layer).  Internal to the kernels.
 */
#ifndef TVMD_WOOFLES_WIDE_H_
#define TVMD_WOOFLES_WIDE_H_

#include <stdint.h>

#include "tvmdevice/fixedpoint.h"
#include "woofles_tile.h"

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
      y = tvmd_multiply_by_quantized_multiplier_64(tvmd_wrap_i64(raw), multiplier[c], shift[c]);
    } else {
      uint32_t raw = (uint32_t)acc[l];
      if (bias != NULL) raw += (uint32_t)woofles_load_i32(bias, c);
      y = tvmd_multiply_by_quantized_multiplier(tvmd_wrap_i32(raw), multiplier[c], shift[c]);
    }
    woofles_store_elem(out, (size_t)c, 1, tvmd_clamp_i32(y, act_min, act_max));
  }
}

#endif /* TVMD_WOOFLES_WIDE_H_ */
