/*
 * x86-64 AVX2 lanes of SOFTMAX's memoized tables (softmax.c): the
 * exponential of every distance below a row's maximum (gemmlowp's
 * exp_on_negative_values for Q5.26 input, tvmdevice/fixedpoint.h) and the
 * outputs of those exponentials for one row's sum, 8 distances a step, with
 * the bits of the scalar code: every fixed-point multiply is the doubling
 * high multiply of simd_x86_elementwise.c (never with both operands INT32_MIN
 * here: the exponentials' operands are in (-2^30, 2^30) or nonnegative
 * constants, the input multiplier is positive), every rounding division the
 * reference's remainder-and-threshold form, gemmlowp's conditional barrel
 * shifter a blend.  The AVX-512 levels run these too.
 */
#include "internal.h"

#if TVMD_CMSIS_X86

#include "simd_x86.h" /* the intrinsics, native or emulated */

#define AVX2 TVMD_X86_TARGET("avx2")
#define AVX2_INLINE static inline __attribute__((always_inline)) TVMD_X86_TARGET("avx2")

/* tvmd_fp_mul on 8 lanes: floor((a * b + 2^30) / 2^31), the low 32 bits. */
AVX2_INLINE __m256i fp_mul8(__m256i a, __m256i b) {
  const __m256i nudge = _mm256_set1_epi64x((int64_t)1 << 30);
  const __m256i even = _mm256_add_epi64(_mm256_mul_epi32(a, b), nudge);
  const __m256i odd = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)), nudge);
  return _mm256_blend_epi32(_mm256_srli_epi64(even, 31), _mm256_slli_epi64(odd, 1), 0xAA);
}

/* tvmd_rounding_divide_by_pot on 8 lanes, 0 <= exponent <= 31. */
AVX2_INLINE __m256i rdpot8(__m256i x, int exponent) {
  const int32_t mask = (int32_t)(((int64_t)1 << exponent) - 1);
  const __m256i remainder = _mm256_and_si256(x, _mm256_set1_epi32(mask));
  const __m256i threshold = _mm256_sub_epi32(_mm256_set1_epi32(mask >> 1), _mm256_srai_epi32(x, 31));
  return _mm256_sub_epi32(_mm256_sra_epi32(x, _mm_cvtsi32_si128(exponent)), _mm256_cmpgt_epi32(remainder, threshold));
}

/* tvmd_fp_exp_on_interval on 8 lanes. */
AVX2_INLINE __m256i exp_on_interval8(__m256i a) {
  const __m256i constant_term = _mm256_set1_epi32(1895147668), one_third = _mm256_set1_epi32(715827883);
  const __m256i x = _mm256_add_epi32(a, _mm256_set1_epi32(1 << 28));
  const __m256i x2 = fp_mul8(x, x);
  const __m256i x3 = fp_mul8(x2, x);
  const __m256i x4_over_4 = rdpot8(fp_mul8(x2, x2), 2);
  const __m256i poly = rdpot8(_mm256_add_epi32(fp_mul8(_mm256_add_epi32(x4_over_4, x3), one_third), x2), 1);
  return _mm256_add_epi32(constant_term, fp_mul8(constant_term, _mm256_add_epi32(x, poly)));
}

/* tvmd_fp_exp_on_negative_values(a, 5) on 8 lanes (a <= 0): the quarter's
 * remainder shifted left 5 bits (|it| <= 2^24 never saturates), then each
 * set bit 24..30 of the remainder multiplies by its barrel factor. */
AVX2_INLINE __m256i exp_on_negative_values8(__m256i a) {
  static const int32_t barrel[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  const __m256i one_quarter = _mm256_set1_epi32(1 << 24);
  const __m256i a_mod = _mm256_sub_epi32(_mm256_and_si256(a, _mm256_set1_epi32((1 << 24) - 1)), one_quarter);
  __m256i result = exp_on_interval8(_mm256_slli_epi32(a_mod, 5));
  const __m256i remainder = _mm256_sub_epi32(a_mod, a);
  for (int k = 0; k < 7; k++) {
    const __m256i bit = _mm256_set1_epi32(1 << (24 + k));
    const __m256i set = _mm256_cmpeq_epi32(_mm256_and_si256(remainder, bit), bit);
    result = _mm256_blendv_epi8(result, fp_mul8(result, _mm256_set1_epi32(barrel[k])), set);
  }
  return _mm256_blendv_epi8(result, _mm256_set1_epi32(INT32_MAX), _mm256_cmpeq_epi32(a, _mm256_setzero_si256()));
}

AVX2 void tvmd_cmsis_softmax_exps_avx2(const tvmd_cmsis_softmax_params_t* p, int32_t span, int32_t* exps,
                                       int32_t* terms) {
  const __m256i multiplier = _mm256_set1_epi32(p->input_multiplier);
  const __m128i left = _mm_cvtsi32_si128(p->input_left_shift);
  const __m256i diff_min = _mm256_set1_epi32(p->diff_min);
  for (int32_t d0 = 0; d0 <= span; d0 += 8) {
    const __m256i diff = _mm256_sub_epi32(_mm256_setzero_si256(),
                                          _mm256_add_epi32(_mm256_set1_epi32(d0), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
    const __m256i e = exp_on_negative_values8(fp_mul8(_mm256_sll_epi32(diff, left), multiplier));
    const __m256i excluded = _mm256_cmpgt_epi32(diff_min, diff); /* -d < diff_min */
    _mm256_storeu_si256((__m256i*)(void*)(exps + d0), _mm256_andnot_si256(excluded, e));
    _mm256_storeu_si256((__m256i*)(void*)(terms + d0), _mm256_andnot_si256(excluded, rdpot8(e, 12)));
  }
}

AVX2 void tvmd_cmsis_softmax_outputs_avx2(const int32_t* exps, int32_t count, int32_t shifted_scale, int exponent,
                                          int32_t out_min, int32_t out_max, int32_t* outs) {
  const __m256i scale = _mm256_set1_epi32(shifted_scale);
  const __m256i lo = _mm256_set1_epi32(out_min), hi = _mm256_set1_epi32(out_max);
  for (int32_t d0 = 0; d0 < count; d0 += 8) {
    /* An exponent of 32 or more rounds every product to 0 (softmax.c's rdpot). */
    const __m256i unsat = exponent >= 32 ? _mm256_setzero_si256()
                                         : rdpot8(fp_mul8(scale, _mm256_loadu_si256((const __m256i*)(const void*)(exps + d0))),
                                                  exponent);
    const __m256i v = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(unsat, lo), lo), hi);
    _mm256_storeu_si256((__m256i*)(void*)(outs + d0), v);
  }
}

AVX2 void tvmd_cmsis_softmax_row_range_avx2(const int8_t* x, int32_t depth, int32_t* lo, int32_t* hi) {
  int32_t c = 0, mn = INT8_MAX, mx = INT8_MIN;
  if (depth >= 32) {
    __m256i vmin = _mm256_set1_epi8(INT8_MAX), vmax = _mm256_set1_epi8(INT8_MIN);
    for (; c + 32 <= depth; c += 32) {
      const __m256i v = _mm256_loadu_si256((const __m256i*)(const void*)(x + c));
      vmin = _mm256_min_epi8(vmin, v);
      vmax = _mm256_max_epi8(vmax, v);
    }
    if (c < depth) { /* the last 32 entries again: min and max do not mind */
      const __m256i v = _mm256_loadu_si256((const __m256i*)(const void*)(x + depth - 32));
      vmin = _mm256_min_epi8(vmin, v);
      vmax = _mm256_max_epi8(vmax, v);
    }
    int8_t lanes_min[32], lanes_max[32];
    _mm256_storeu_si256((__m256i*)(void*)lanes_min, vmin);
    _mm256_storeu_si256((__m256i*)(void*)lanes_max, vmax);
    for (int k = 0; k < 32; k++) {
      mn = lanes_min[k] < mn ? lanes_min[k] : mn;
      mx = lanes_max[k] > mx ? lanes_max[k] : mx;
    }
    c = depth;
  }
  for (; c < depth; c++) {
    mn = x[c] < mn ? x[c] : mn;
    mx = x[c] > mx ? x[c] : mx;
  }
  *lo = mn;
  *hi = mx;
}

#endif /* TVMD_CMSIS_X86 */
