/*
 * x86-64 AVX-512 versions of the two hot loops: the int16 GEMM tile and the
 * requantization.  Like CMSIS-NN's DSP/MVE paths, this is an optional
 * accelerated path beside the portable C one (gemm.c, requantize.c), chosen
 * at run time from the CPU's features, so one build runs on any x86-64 and
 * firmware builds compile none of it.  Both paths compute identical values;
 * tests run every kernel through each.
 *
 * Why intrinsics: the GEMM needs vpmaddwd on a broadcast input pair against
 * 16 columns of pair-interleaved weights (no horizontal sums), a form
 * compilers do not derive from C; and the requantization's 64-bit products
 * need vpmuldq on even and odd lanes rather than the slow vpmullq the
 * vectorizer picks.
 */
#include "internal.h"

#if TVMD_CMSIS_X86

#include <immintrin.h>
#include <string.h>

#define AVX512 __attribute__((target("avx512f,avx512bw")))
#define AVX512_INLINE static inline __attribute__((always_inline, target("avx512f,avx512bw")))

int tvmd_cmsis_cpu_has_avx512(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
}

/* rows x (16 * nv) outputs: out[r][j] = sum over pairs of a[r] . w columns.
 * rows and nv are constants at every call site, so the accumulators unroll
 * into registers (4 x 4 zmm at most). */
AVX512_INLINE void tile(const int16_t* a, int32_t lda, int rows, int nv, int32_t pairs, const int32_t* w,
                        int32_t ldw, int32_t* out, int32_t ldo) {
  __m512i c[4][4];
  for (int r = 0; r < rows; r++) {
    for (int v = 0; v < nv; v++) c[r][v] = _mm512_setzero_si512();
  }
  for (int32_t p = 0; p < pairs; p++) {
    const int32_t* wp = w + (size_t)p * (size_t)ldw;
    __m512i b[4];
    for (int v = 0; v < nv; v++) b[v] = _mm512_loadu_si512((const void*)(wp + 16 * v));
    for (int r = 0; r < rows; r++) {
      int32_t pair;
      memcpy(&pair, a + (size_t)r * (size_t)lda + 2 * (size_t)p, sizeof(pair));
      const __m512i x = _mm512_set1_epi32(pair);
      for (int v = 0; v < nv; v++) c[r][v] = _mm512_add_epi32(c[r][v], _mm512_madd_epi16(x, b[v]));
    }
  }
  for (int r = 0; r < rows; r++) {
    for (int v = 0; v < nv; v++) _mm512_storeu_si512((void*)(out + (size_t)r * (size_t)ldo + 16 * v), c[r][v]);
  }
}

AVX512_INLINE void row_block(const int16_t* a, int32_t lda, int rows, int32_t pairs, const int32_t* w, int32_t ldw,
                             int32_t* out) {
  int32_t j = 0;
  for (; j + 64 <= ldw; j += 64) tile(a, lda, rows, 4, pairs, w + j, ldw, out + j, ldw);
  for (; j < ldw; j += 16) tile(a, lda, rows, 1, pairs, w + j, ldw, out + j, ldw);
}

AVX512 void tvmd_cmsis_gemm_s16_avx512(const int16_t* a, int32_t lda, int32_t m, int32_t k_pairs, const int16_t* w,
                                       int32_t ldw, int32_t* acc) {
  const int32_t* w32 = (const int32_t*)(const void*)w;
  int32_t r = 0;
  for (; r + 4 <= m; r += 4) row_block(a + (size_t)r * (size_t)lda, lda, 4, k_pairs, w32, ldw, acc + (size_t)r * ldw);
  for (; r < m; r++) row_block(a + (size_t)r * (size_t)lda, lda, 1, k_pairs, w32, ldw, acc + (size_t)r * ldw);
}

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

AVX512 void tvmd_cmsis_requantize_avx512(const int32_t* acc, const int32_t* bias, const int32_t* multiplier,
                                         const int32_t* shift, int32_t n, const tvmd_cmsis_quant_t* q,
                                         int8_t* out) {
  const __m512i offset = _mm512_set1_epi32(q->output_offset);
  const __m512i lo = _mm512_set1_epi32(q->act_min), hi = _mm512_set1_epi32(q->act_max);
  for (int32_t i = 0; i < n; i += 16) {
    const __mmask16 live = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1u);
    __m512i x = _mm512_maskz_loadu_epi32(live, acc + i);
    if (bias != NULL) x = _mm512_add_epi32(x, _mm512_maskz_loadu_epi32(live, bias + i));
    __m512i y = requantize16(x, _mm512_maskz_loadu_epi32(live, multiplier + i),
                             _mm512_maskz_loadu_epi32(live, shift + i));
    y = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(y, offset), lo), hi);
    _mm512_mask_cvtepi32_storeu_epi8(out + i, live, y);
  }
}

/* Requantize 16 float-accumulated channels (exact integers), add the bias,
 * clamp and store the live lanes as int8. */
AVX512_INLINE void finish16(__m512 sum, const int32_t* bias, const int32_t* multiplier, const int32_t* shift,
                            const tvmd_cmsis_quant_t* q, __mmask16 live, int8_t* out) {
  __m512i x = _mm512_cvttps_epi32(sum);
  if (bias != NULL) x = _mm512_add_epi32(x, _mm512_maskz_loadu_epi32(live, bias));
  __m512i y = requantize16(x, _mm512_maskz_loadu_epi32(live, multiplier), _mm512_maskz_loadu_epi32(live, shift));
  y = _mm512_add_epi32(y, _mm512_set1_epi32(q->output_offset));
  y = _mm512_min_epi32(_mm512_max_epi32(y, _mm512_set1_epi32(q->act_min)), _mm512_set1_epi32(q->act_max));
  _mm512_mask_cvtepi32_storeu_epi8(out, live, y);
}

AVX512 void tvmd_cmsis_depthwise_avx512(const tvmd_cmsis_depthwise_conv_params_t* p, const float* image,
                                        const int32_t* bias, int8_t* output) {
  const size_t cp = (size_t)p->cp;
  for (int32_t oy = 0; oy < p->out_h; oy++) {
    const int32_t iy0 = oy * p->stride_h - p->pad_h;
    for (int32_t ox = 0; ox < p->out_w; ox++) {
      const int32_t ix0 = ox * p->stride_w - p->pad_w;
      /* The taps inside the image, as offsets into the image and the weights. */
      int32_t taps[TVMD_CMSIS_K_CHUNK][2];
      int32_t n = 0;
      for (int32_t fy = 0; fy < p->filter_h; fy++) {
        const int32_t iy = iy0 + fy * p->dilation_h;
        if (iy < 0 || iy >= p->in_h) continue;
        for (int32_t fx = 0; fx < p->filter_w; fx++) {
          const int32_t ix = ix0 + fx * p->dilation_w;
          if (ix < 0 || ix >= p->in_w) continue;
          taps[n][0] = (iy * p->in_w + ix) * (int32_t)cp;
          taps[n][1] = (fy * p->filter_w + fx) * (int32_t)cp;
          n++;
        }
      }
      int8_t* out = output + ((size_t)oy * (size_t)p->out_w + (size_t)ox) * (size_t)p->out_ch;
      int32_t c0 = 0;
      for (; c0 + 64 <= p->out_ch; c0 += 64) {
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (int32_t t = 0; t < n; t++) {
          const float* x = image + taps[t][0] + c0;
          const float* w = p->weights + taps[t][1] + c0;
          s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x), _mm512_loadu_ps(w), s0);
          s1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 16), _mm512_loadu_ps(w + 16), s1);
          s2 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 32), _mm512_loadu_ps(w + 32), s2);
          s3 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 48), _mm512_loadu_ps(w + 48), s3);
        }
        const __m512 sums[4] = {s0, s1, s2, s3};
        for (int v = 0; v < 4; v++) {
          const int32_t c = c0 + 16 * v;
          finish16(sums[v], bias ? bias + c : NULL, p->multiplier + c, p->shift + c, &p->q, (__mmask16)0xFFFF,
                   out + c);
        }
      }
      for (; c0 < p->out_ch; c0 += 16) {
        __m512 s0 = _mm512_setzero_ps();
        for (int32_t t = 0; t < n; t++) {
          s0 = _mm512_fmadd_ps(_mm512_loadu_ps(image + taps[t][0] + c0), _mm512_loadu_ps(p->weights + taps[t][1] + c0),
                               s0);
        }
        const int32_t left = p->out_ch - c0;
        const __mmask16 live = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
        finish16(s0, bias ? bias + c0 : NULL, p->multiplier + c0, p->shift + c0, &p->q, live, out + c0);
      }
    }
  }
}

#endif /* TVMD_CMSIS_X86 */
