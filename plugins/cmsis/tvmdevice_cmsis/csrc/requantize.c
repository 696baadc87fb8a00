/*
 * Requantization of int32 accumulators to int8, in loops the compiler
 * vectorizes (tvmdevice/quant.h's double rounding is written in a
 * vectorizable form; tests/test_requantize.py checks every kernel path
 * against it value for value).
 */
#include "internal.h"

/* tvmd_multiply_by_quantized_multiplier with the rounding divide's mask
 * computed in uint32 (right <= 31, so 1u << right is defined) instead of
 * int64: a 64-bit variable shift left GCC's vectorizer without a vector type,
 * and the loops below scalar (5.5 ns a value on AVX2 hardware). */
TVMD_CMSIS_INLINE int32_t requantize_one(int32_t x, int32_t multiplier, int32_t shift) {
  const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const int32_t high = tvmd_sat_rounding_doubling_high_mul((int32_t)((uint32_t)x << left), multiplier);
  const int32_t mask = (int32_t)((1u << right) - 1u);
  const int32_t remainder = high & mask;
  const int32_t threshold = (mask >> 1) + (high < 0 ? 1 : 0);
  return (high >> right) + (remainder > threshold ? 1 : 0);
}

TVMD_CMSIS_SIMD
static void requantize_loop(const int32_t* restrict acc, const int32_t* restrict multiplier,
                            const int32_t* restrict shift, int32_t n, int32_t offset, int32_t lo,
                            int32_t hi, int8_t* restrict out) {
  for (int32_t i = 0; i < n; i++) {
    int32_t v = requantize_one(acc[i], multiplier[i], shift[i]) + offset;
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    out[i] = (int8_t)v;
  }
}

TVMD_CMSIS_SIMD
static void requantize_bias_loop(const int32_t* restrict acc, const int32_t* restrict bias,
                                 const int32_t* restrict multiplier, const int32_t* restrict shift,
                                 int32_t n, int32_t offset, int32_t lo, int32_t hi,
                                 int8_t* restrict out) {
  for (int32_t i = 0; i < n; i++) {
    const int32_t x = tvmd_cmsis_wrap_add(acc[i], bias[i]);
    int32_t v = requantize_one(x, multiplier[i], shift[i]) + offset;
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    out[i] = (int8_t)v;
  }
}

void tvmd_cmsis_requantize_bias_s8(const int32_t* acc, const int32_t* bias, const int32_t* multiplier,
                                   const int32_t* shift, int32_t n, const tvmd_cmsis_quant_t* q,
                                   int8_t* out) {
#if TVMD_CMSIS_X86
  const int level = tvmd_cmsis_simd_level();
  if (level == TVMD_CMSIS_LEVEL_AVX512) {
    tvmd_cmsis_requantize_avx512(acc, bias, multiplier, shift, n, q, out);
    return;
  }
  if (level == TVMD_CMSIS_LEVEL_AVX2) {
    tvmd_cmsis_requantize_avx2(acc, bias, multiplier, shift, n, q, out);
    return;
  }
#endif
  if (bias != NULL) {
    requantize_bias_loop(acc, bias, multiplier, shift, n, q->output_offset, q->act_min, q->act_max, out);
  } else {
    requantize_loop(acc, multiplier, shift, n, q->output_offset, q->act_min, q->act_max, out);
  }
}

void tvmd_cmsis_requantize_s8(const int32_t* acc, const int32_t* multiplier, const int32_t* shift,
                              int32_t n, const tvmd_cmsis_quant_t* q, int8_t* out) {
  tvmd_cmsis_requantize_bias_s8(acc, NULL, multiplier, shift, n, q, out);
}
