/*
 * x86-64 AVX2 versions of the int8 pooling kernels (pooling.c's portable
 * loops, TFLM's reference_integer_ops MaxPool / AveragePool): each output
 * pixel goes a block of channels at a time through its whole window clipped
 * to the image, the block's running maximum or sums in one register.
 *
 *  - MAX_POOL_2D: 32 channels a block (vpmaxsb from -128), then the
 *    activation clamp; 16, 8 or 4 for fewer channels; 1 to 3 one by one.
 *  - AVERAGE_POOL_2D, windows of at most 256 taps (larger ones run the
 *    portable loop): 16 channels a block summed as int16 lanes (|sum| <=
 *    128 * 256 fits), then TFLM's rounding division: the sum plus half the
 *    tap count, signed as the sum (a zero sum gives 0 either way), divided
 *    in float32 and truncated toward zero.  That equals C's integer
 *    division: the numerator (|n| < 2^24) and the count are exact in
 *    float32, and a quotient q of magnitude at most 129 that is not an
 *    integer lies at least 1 / count >= 2^-8 from every integer, while the
 *    correctly rounded float32 quotient is within |q| * 2^-24 < 2^-16 of q,
 *    so truncation picks the same integer.
 *
 * A channel count that is not a multiple of the block takes one more block
 * ending at the last channel, overlapping the one before it: those outputs
 * are computed again from the same inputs and written with the same values.
 * Beside the portable C, chosen at run time (tvmd_cmsis_simd_level);
 * firmware builds compile none of it.  Values are identical to the portable
 * path's; tests run both against tflite-micro.
 */
#include "internal.h"

#if TVMD_CMSIS_X86

#include <string.h>

#include "simd_x86.h" /* the intrinsics, native or emulated */

#define AVX2 TVMD_X86_TARGET("avx2")
#define AVX2_INLINE static inline __attribute__((always_inline)) TVMD_X86_TARGET("avx2")

/* An output pixel's window clipped to the image: tap (r, k) of channel c is
 * first[r * row_step + k * ch + c]; rows or cols is 0 when it lies outside. */
typedef struct {
  const int8_t* first;
  int32_t rows, cols, ch;
  size_t row_step;
} window_t;

AVX2_INLINE window_t window(const tvmd_cmsis_pool_params_t* p, const int8_t* input, int32_t b, int32_t oy,
                            int32_t ox) {
  const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
  const int32_t fy0 = tvmd_cmsis_max(0, -iy0), fy1 = tvmd_cmsis_min(p->filter_h, p->in_h - iy0);
  const int32_t fx0 = tvmd_cmsis_max(0, -ix0), fx1 = tvmd_cmsis_min(p->filter_w, p->in_w - ix0);
  window_t w;
  w.rows = fy1 > fy0 ? fy1 - fy0 : 0;
  w.cols = fx1 > fx0 ? fx1 - fx0 : 0;
  w.ch = p->channels;
  w.row_step = (size_t)p->in_w * (size_t)p->channels;
  w.first = input;
  if (w.rows > 0 && w.cols > 0) {
    const size_t pixel = ((size_t)b * (size_t)p->in_h + (size_t)(iy0 + fy0)) * (size_t)p->in_w + (size_t)(ix0 + fx0);
    w.first = input + pixel * (size_t)p->channels;
  }
  return w;
}

/* width (32, 16, 8 or 4, a constant at each call) int8 values from src into
 * the low bytes; the bytes past width are not used. */
AVX2_INLINE __m256i load_s8(const int8_t* src, int width) {
  if (width == 32) return _mm256_loadu_si256((const __m256i*)(const void*)src);
  if (width == 16) return _mm256_castsi128_si256(_mm_loadu_si128((const __m128i*)(const void*)src));
  if (width == 8) return _mm256_castsi128_si256(_mm_loadl_epi64((const __m128i*)(const void*)src));
  int32_t v;
  memcpy(&v, src, sizeof v);
  return _mm256_castsi128_si256(_mm_cvtsi32_si128(v));
}

/* The low width bytes of v to dst. */
AVX2_INLINE void store_s8(int8_t* dst, __m256i v, int width) {
  if (width == 32) {
    _mm256_storeu_si256((__m256i*)(void*)dst, v);
  } else if (width == 16) {
    _mm_storeu_si128((__m128i*)(void*)dst, _mm256_castsi256_si128(v));
  } else if (width == 8) {
    _mm_storel_epi64((__m128i*)(void*)dst, _mm256_castsi256_si128(v));
  } else {
    const int32_t x = _mm_cvtsi128_si32(_mm256_castsi256_si128(v));
    memcpy(dst, &x, sizeof x);
  }
}

/* ------------------------------------------------------------ MAX_POOL_2D */
typedef struct {
  __m256i lo, hi; /* the activation range in every byte */
} max_consts_t;

/* Channels [c, c + width) of one output pixel. */
AVX2_INLINE void max_block(const window_t* w, int32_t c, int width, const max_consts_t* k, int8_t* out) {
  __m256i m = _mm256_set1_epi8(INT8_MIN);
  const int8_t* row = w->first + c;
  for (int32_t r = 0; r < w->rows; r++, row += w->row_step) {
    const int8_t* src = row;
    for (int32_t x = 0; x < w->cols; x++, src += w->ch) m = _mm256_max_epi8(m, load_s8(src, width));
  }
  store_s8(out + c, _mm256_min_epi8(_mm256_max_epi8(m, k->lo), k->hi), width);
}

/* Every channel of one output pixel in blocks of width, the last one ending
 * at the last channel (ch >= width). */
AVX2_INLINE void max_blocks(const window_t* w, int width, const max_consts_t* k, int8_t* out) {
  int32_t c = 0;
  for (; c + width <= w->ch; c += width) max_block(w, c, width, k, out);
  if (c < w->ch) max_block(w, w->ch - width, width, k, out);
}

AVX2 int32_t tvmd_cmsis_max_pool_s8_avx2(const tvmd_cmsis_pool_params_t* p, const int8_t* input, int8_t* output) {
  max_consts_t k;
  k.lo = _mm256_set1_epi8((int8_t)p->act_min);
  k.hi = _mm256_set1_epi8((int8_t)p->act_max);
  const int32_t ch = p->channels;
  int8_t* out = output;
  for (int32_t b = 0; b < p->batches; b++) {
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      for (int32_t ox = 0; ox < p->out_w; ox++, out += ch) {
        const window_t w = window(p, input, b, oy, ox);
        if (ch >= 32) {
          max_blocks(&w, 32, &k, out);
        } else if (ch >= 16) {
          max_blocks(&w, 16, &k, out);
        } else if (ch >= 8) {
          max_blocks(&w, 8, &k, out);
        } else if (ch >= 4) {
          max_blocks(&w, 4, &k, out);
        } else {
          for (int32_t c = 0; c < ch; c++) {
            int32_t m = INT8_MIN;
            for (int32_t r = 0; r < w.rows; r++) {
              const int8_t* src = w.first + (size_t)r * w.row_step + (size_t)c;
              for (int32_t x = 0; x < w.cols; x++, src += ch) m = tvmd_cmsis_max(m, *src);
            }
            out[c] = (int8_t)tvmd_cmsis_min(tvmd_cmsis_max(m, p->act_min), p->act_max);
          }
        }
      }
    }
  }
  return TVMD_OK;
}

/* -------------------------------------------------------- AVERAGE_POOL_2D */
typedef struct {
  __m256i half;    /* count / 2 in every int32 lane */
  __m256 count;    /* the window's taps as float32 */
  __m256i lo, hi;  /* the activation range in every int32 lane */
} avg_consts_t;

/* The rounded averages of 8 int32 sums, clamped: (s + sign(s) * half) / count,
 * truncated toward zero (the float division is exact: see the top). */
AVX2_INLINE __m256i average8(__m256i s, const avg_consts_t* k) {
  const __m256i n = _mm256_add_epi32(s, _mm256_sign_epi32(k->half, s));
  const __m256i q = _mm256_cvttps_epi32(_mm256_div_ps(_mm256_cvtepi32_ps(n), k->count));
  return _mm256_min_epi32(_mm256_max_epi32(q, k->lo), k->hi);
}

/* Channels [c, c + width) of one output pixel (width 16, 8 or 4): the sums as
 * 16 int16 lanes (the lanes past width sum zeros or unused bytes and are
 * not stored). */
AVX2_INLINE void avg_block(const window_t* w, int32_t c, int width, const avg_consts_t* k, int8_t* out) {
  __m256i s = _mm256_setzero_si256();
  const int8_t* row = w->first + c;
  for (int32_t r = 0; r < w->rows; r++, row += w->row_step) {
    const int8_t* src = row;
    for (int32_t x = 0; x < w->cols; x++, src += w->ch) {
      s = _mm256_add_epi16(s, _mm256_cvtepi8_epi16(_mm256_castsi256_si128(load_s8(src, width))));
    }
  }
  const __m256i lo = average8(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(s)), k);
  const __m256i hi = average8(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(s, 1)), k);
  /* Values are in int8 range: the saturating packs keep them; 0xD8 puts the
   * two 128-bit halves' words back in order. */
  const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(lo, hi), 0xD8);
  const __m128i bytes = _mm_packs_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
  store_s8(out + c, _mm256_castsi128_si256(bytes), width);
}

AVX2_INLINE void avg_blocks(const window_t* w, int width, const avg_consts_t* k, int8_t* out) {
  int32_t c = 0;
  for (; c + width <= w->ch; c += width) avg_block(w, c, width, k, out);
  if (c < w->ch) avg_block(w, w->ch - width, width, k, out);
}

AVX2 int32_t tvmd_cmsis_avg_pool_s8_avx2(const tvmd_cmsis_pool_params_t* p, const int8_t* input, int8_t* output) {
  avg_consts_t k;
  k.lo = _mm256_set1_epi32(p->act_min);
  k.hi = _mm256_set1_epi32(p->act_max);
  const int32_t ch = p->channels;
  int8_t* out = output;
  for (int32_t b = 0; b < p->batches; b++) {
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      for (int32_t ox = 0; ox < p->out_w; ox++, out += ch) {
        const window_t w = window(p, input, b, oy, ox);
        const int32_t count = w.rows * w.cols;
        if (count == 0) return TVMD_ERR_KERNEL; /* TFLM fails an empty window too */
        k.half = _mm256_set1_epi32(count / 2);
        k.count = _mm256_set1_ps((float)count);
        if (ch >= 16) {
          avg_blocks(&w, 16, &k, out);
        } else if (ch >= 8) {
          avg_blocks(&w, 8, &k, out);
        } else if (ch >= 4) {
          avg_blocks(&w, 4, &k, out);
        } else {
          for (int32_t c = 0; c < ch; c++) {
            int32_t a = 0;
            for (int32_t r = 0; r < w.rows; r++) {
              const int8_t* src = w.first + (size_t)r * w.row_step + (size_t)c;
              for (int32_t x = 0; x < w.cols; x++, src += ch) a += *src;
            }
            const int32_t v = a > 0 ? (a + count / 2) / count : (a - count / 2) / count;
            out[c] = (int8_t)tvmd_cmsis_min(tvmd_cmsis_max(v, p->act_min), p->act_max);
          }
        }
      }
    }
  }
  return TVMD_OK;
}

#endif /* TVMD_CMSIS_X86 */
