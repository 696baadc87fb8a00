/*
 * The requantization of int32 sums to int8 in vector registers, shared by
 * the x86-64 GEMM tiles and loops (simd_x86.c, simd_x86_vnni.c): bias
 * (wrapping), tvmd_multiply_by_quantized_multiplier per lane, output
 * offset, clamp, the int8 store.  One copy of that math for every path; the
 * portable C twin is requantize.c (its comment proves the formulation).
 */
#ifndef TVMD_CMSIS_SIMD_X86_REQUANTIZE_H_
#define TVMD_CMSIS_SIMD_X86_REQUANTIZE_H_

#include <string.h>

#include "internal.h"
#include "simd_x86.h"

#define AVX512 TVMD_X86_TARGET("avx512f,avx512bw")
#define AVX512_INLINE static inline __attribute__((always_inline)) TVMD_X86_TARGET("avx512f,avx512bw")
#define AVX2 TVMD_X86_TARGET("avx2")
#define AVX2_INLINE static inline __attribute__((always_inline)) TVMD_X86_TARGET("avx2")

/* 16 lanes of tvmd_cmsis_requantize_bias_s8 (see requantize.c for the math). */
AVX512_INLINE __m512i requantize16(__m512i x, __m512i multiplier, __m512i shift) {
  const __m512i zero = _mm512_setzero_si512();
  const __m512i left = _mm512_max_epi32(shift, zero);
  const __m512i right = _mm512_max_epi32(_mm512_sub_epi32(zero, shift), zero);
  const __m512i a = _mm512_sllv_epi32(x, left);
  const __m512i nudge = _mm512_set1_epi64((int64_t)1 << 30);
  /* Even lanes: the signed 64-bit product in place; odd lanes: shifted down. */
  const __m512i even = _mm512_add_epi64(_mm512_mul_epi32(a, multiplier), nudge);
  const __m512i odd = _mm512_add_epi64(
      _mm512_mul_epi32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(multiplier, 32)), nudge);
  /* Bits 31..62 of each product: low half of even >> 31, high half of odd << 1. */
  const __m512i high = _mm512_mask_blend_epi32((__mmask16)0xAAAA, _mm512_srli_epi64(even, 31),
                                               _mm512_slli_epi64(odd, 1));
  const __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(_mm512_set1_epi32(1), right), _mm512_set1_epi32(1));
  const __m512i remainder = _mm512_and_si512(high, mask);
  /* threshold = (mask >> 1) + (high < 0): srai(high, 31) is -1 for negatives. */
  const __m512i threshold = _mm512_sub_epi32(_mm512_srai_epi32(mask, 1), _mm512_srai_epi32(high, 31));
  const __mmask16 round_up = _mm512_cmpgt_epi32_mask(remainder, threshold);
  return _mm512_mask_add_epi32(_mm512_srav_epi32(high, right), round_up, _mm512_srav_epi32(high, right),
                               _mm512_set1_epi32(1));
}

/* 16 sums to int8 (bias, requantization, output offset, clamp) and the live
 * lanes stored: only live lanes of bias, multiplier and shift are read. */
AVX512_INLINE void store16_s8_avx512(__m512i x, const int32_t* bias, const int32_t* multiplier,
                                     const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out,
                                     __mmask16 live) {
  if (bias != NULL) x = _mm512_add_epi32(x, _mm512_maskz_loadu_epi32(live, bias));
  __m512i y = requantize16(x, _mm512_maskz_loadu_epi32(live, multiplier), _mm512_maskz_loadu_epi32(live, shift));
  y = _mm512_add_epi32(y, _mm512_set1_epi32(q->output_offset));
  y = _mm512_min_epi32(_mm512_max_epi32(y, _mm512_set1_epi32(q->act_min)), _mm512_set1_epi32(q->act_max));
  _mm512_mask_cvtepi32_storeu_epi8(out, live, y);
}

/* The first n (<= 16) lanes. */
static inline __mmask16 tvmd_cmsis_live16(int32_t n) {
  return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
}

/* 8 lanes of tvmd_cmsis_requantize_bias_s8: requantize16 without mask
 * registers (a compare gives -1 where the rounding adds 1). */
AVX2_INLINE __m256i requantize8(__m256i x, __m256i multiplier, __m256i shift) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i left = _mm256_max_epi32(shift, zero);
  const __m256i right = _mm256_max_epi32(_mm256_sub_epi32(zero, shift), zero);
  const __m256i a = _mm256_sllv_epi32(x, left);
  const __m256i nudge = _mm256_set1_epi64x((int64_t)1 << 30);
  const __m256i even = _mm256_add_epi64(_mm256_mul_epi32(a, multiplier), nudge);
  const __m256i odd = _mm256_add_epi64(
      _mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(multiplier, 32)), nudge);
  const __m256i high = _mm256_blend_epi32(_mm256_srli_epi64(even, 31), _mm256_slli_epi64(odd, 1), 0xAA);
  const __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(_mm256_set1_epi32(1), right), _mm256_set1_epi32(1));
  const __m256i remainder = _mm256_and_si256(high, mask);
  const __m256i threshold = _mm256_sub_epi32(_mm256_srai_epi32(mask, 1), _mm256_srai_epi32(high, 31));
  const __m256i round_up = _mm256_cmpgt_epi32(remainder, threshold);
  return _mm256_sub_epi32(_mm256_srav_epi32(high, right), round_up);
}

/* Bias (wrapping), requantization, output offset and clamp of 8 lanes. */
AVX2_INLINE __m256i finish8(__m256i x, const int32_t* bias, const int32_t* multiplier, const int32_t* shift,
                            const tvmd_cmsis_quant_t* q) {
  if (bias != NULL) x = _mm256_add_epi32(x, _mm256_loadu_si256((const __m256i*)(const void*)bias));
  __m256i y = requantize8(x, _mm256_loadu_si256((const __m256i*)(const void*)multiplier),
                          _mm256_loadu_si256((const __m256i*)(const void*)shift));
  y = _mm256_add_epi32(y, _mm256_set1_epi32(q->output_offset));
  return _mm256_min_epi32(_mm256_max_epi32(y, _mm256_set1_epi32(q->act_min)), _mm256_set1_epi32(q->act_max));
}

/* The low bytes of 16 int32 lanes (y0: 0..7, y1: 8..15) in order, as
 * _mm512_cvtepi32_epi8 stores them: a byte shuffle per 128-bit half, then a
 * dword permute joins the halves. */
AVX2_INLINE __m128i narrow16(__m256i y0, __m256i y1) {
  const __m256i pick0 = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                         0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i pick1 = _mm256_setr_epi8(-1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1,
                                         -1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i both = _mm256_or_si256(_mm256_shuffle_epi8(y0, pick0), _mm256_shuffle_epi8(y1, pick1));
  return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(both, _mm256_setr_epi32(0, 4, 1, 5, 2, 3, 6, 7)));
}

/* 16 sums (c0: columns 0..7, c1: 8..15) to int8: bias, requantization,
 * clamp; the first live columns written.  A partial block requantizes
 * through zero-filled copies of its parameters: no read past live. */
AVX2_INLINE void store16_s8(__m256i c0, __m256i c1, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, size_t live) {
  if (live == 16) {
    _mm_storeu_si128((__m128i*)(void*)out, narrow16(finish8(c0, bias, multiplier, shift, q),
                                                    finish8(c1, bias ? bias + 8 : NULL, multiplier + 8, shift + 8, q)));
    return;
  }
  int32_t t_bias[16] = {0}, t_mult[16] = {0}, t_shift[16] = {0};
  int8_t t_out[16];
  if (bias != NULL) memcpy(t_bias, bias, live * sizeof(int32_t));
  memcpy(t_mult, multiplier, live * sizeof(int32_t));
  memcpy(t_shift, shift, live * sizeof(int32_t));
  _mm_storeu_si128((__m128i*)(void*)t_out, narrow16(finish8(c0, t_bias, t_mult, t_shift, q),
                                                    finish8(c1, t_bias + 8, t_mult + 8, t_shift + 8, q)));
  memcpy(out, t_out, live);
}

#endif /* TVMD_CMSIS_SIMD_X86_REQUANTIZE_H_ */
