/*
 * Vectorizable requantization of int32 accumulators to int8.
 *
 * Same values as tvmd_multiply_by_quantized_multiplier (tvmdevice/quant.h:
 * saturating rounding doubling high multiply, then rounding divide by a power
 * of two), restated so the compiler vectorizes the loop: quant.h divides an
 * int64 by 2^31, which the vectorizer rejects (~3 ns per value, scalar).
 *
 * For a multiplier m >= 0 (all the prepare step produces) the doubling high
 * multiply's "add a nudge, then divide truncating toward zero" is exactly
 * floor((a * m + 2^30) / 2^31): for a * m >= 0 the nudge is 2^30 and
 * truncation is floor; for a * m < 0 the nudge is 1 - 2^30 and truncating
 * toward zero adds 2^31 - 1 before flooring, which sums to the same 2^30.
 * Its one saturating case (a == m == INT32_MIN) needs m < 0.  The floor
 * division is a shift of which only bits 31..62 are kept, which a logical
 * shift yields as well.  tests/test_requantize.py checks equality with
 * quant.h.
 */
#include "internal.h"

TVMD_CMSIS_INLINE int32_t requantize_one(int32_t x, int32_t multiplier, int32_t shift) {
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = shift > 0 ? 0 : -shift;
  const int32_t a = (int32_t)((uint32_t)x << left);
  const int64_t ab = (int64_t)a * (int64_t)multiplier;
  const int32_t high = (int32_t)(uint32_t)((uint64_t)(ab + ((int64_t)1 << 30)) >> 31);
  const int32_t mask = (int32_t)(((uint32_t)1 << right) - 1u);
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
  if (tvmd_cmsis_use_simd()) {
    tvmd_cmsis_requantize_avx512(acc, bias, multiplier, shift, n, q, out);
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
