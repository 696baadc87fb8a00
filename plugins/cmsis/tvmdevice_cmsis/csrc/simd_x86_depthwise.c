/*
 * x86-64 AVX2 and AVX-512 versions of the int8 DEPTHWISE_CONV_2D with depth
 * multiplier 1 (depthwise_conv.c holds the portable loops and the proof of
 * the arithmetic): per output pixel and block of channels, the sums over tap
 * pairs of (input + input offset) * weight, one vpmaddwd per pair against
 * the pair-interleaved int16 weights ([tap pairs][cp][2], cp = out_ch
 * rounded up to 16, zero padded), then the requantization in registers.
 *
 * No copies per tap, for any channel count:
 *  - a tap outside the image reads a vector of input zero points, which the
 *    offset turns into exactly 0 (the taps the reference skips add nothing);
 *  - AVX2 runs blocks of 16 channels, then one of 8 (a 64-bit load), then
 *    the last 1..7 channels with a 64-bit load too: the bytes past the
 *    channels are the next pixel's (their lanes are never stored); only a
 *    tap whose 8 bytes would cross the end of the image (its last pixel or
 *    so) is copied;
 *  - AVX-512 runs blocks of 32 channels in 512-bit registers and the last
 *    0..31 channels as AVX2 does (see tvmd_cmsis_depthwise_avx512 for the
 *    measurement behind it).
 * Pixels whose window lies inside the image take tap offsets computed once.
 */
#include "internal.h"

#if TVMD_CMSIS_X86

#include <string.h>

#include "simd_x86_requantize.h" /* the intrinsics, AVX2 / AVX512 targets, requantization */

/* Where one output pixel's taps are.  A pixel whose window lies inside
 * the image (`inside`) has tap t at base + offsets[t]; any other has it at
 * src[t] when the tap is in the image (mask[t] ~0), else src[t] is a vector
 * of input zero points (mask[t] 0); a block at channel c0 reads
 * src[t] + (c0 & mask[t]).  Entry `taps` is an odd last tap's partner,
 * whose weights are 0 (offset 0, or the zero points). */
typedef struct {
  const int8_t* base;
  const size_t* offsets;
  const int8_t** src;
  size_t* mask;
} taps_t;

/* Tap t's bytes from channel c0; `inside` is a constant at every call, so
 * each pixel loop compiles once per kind of pixel. */
static inline __attribute__((always_inline)) const int8_t* tap_at(const taps_t* tp, int inside, int32_t t,
                                                                    size_t c0) {
  return inside ? tp->base + tp->offsets[t] + c0 : tp->src[t] + (c0 & tp->mask[t]);
}

/* Whether tap t reads the zero points (a tap outside the image). */
static inline __attribute__((always_inline)) int tap_outside(const taps_t* tp, int inside, int32_t t) {
  return inside ? 0 : tp->mask[t] == 0;
}

/* Output pixel (oy, ox)'s taps into tp; returns whether its window lies
 * inside the image (then only tp->base is set). */
static inline int pixel_taps(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* input,
                             const int8_t* zero_points, int32_t oy, int32_t ox, taps_t* tp) {
  const size_t ch = (size_t)p->in_ch;
  const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
  if (iy0 >= 0 && ix0 >= 0 && iy0 + (p->filter_h - 1) * p->dilation_h < p->in_h &&
      ix0 + (p->filter_w - 1) * p->dilation_w < p->in_w) {
    tp->base = input + ((size_t)iy0 * (size_t)p->in_w + (size_t)ix0) * ch;
    return 1;
  }
  for (int32_t fy = 0, t = 0; fy < p->filter_h; fy++) {
    const int32_t iy = iy0 + fy * p->dilation_h;
    for (int32_t fx = 0; fx < p->filter_w; fx++, t++) {
      const int32_t ix = ix0 + fx * p->dilation_w;
      const int in_image = iy >= 0 && iy < p->in_h && ix >= 0 && ix < p->in_w;
      tp->src[t] = in_image ? input + ((size_t)iy * (size_t)p->in_w + (size_t)ix) * ch : zero_points;
      tp->mask[t] = in_image ? ~(size_t)0 : 0;
    }
  }
  return 0;
}

/* Tap offsets from the window's first tap, and the partner entry `taps`. */
static inline void taps_init(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* zero_points,
                             size_t* offsets, const int8_t** src, size_t* mask, taps_t* tp) {
  const int32_t taps = p->filter_h * p->filter_w;
  for (int32_t fy = 0, t = 0; fy < p->filter_h; fy++) {
    for (int32_t fx = 0; fx < p->filter_w; fx++, t++) {
      offsets[t] = ((size_t)(fy * p->dilation_h) * (size_t)p->in_w + (size_t)(fx * p->dilation_w)) *
                   (size_t)p->in_ch;
    }
  }
  offsets[taps] = 0;
  src[taps] = zero_points;
  mask[taps] = 0;
  tp->base = NULL;
  tp->offsets = offsets;
  tp->src = src;
  tp->mask = mask;
}

/* ------------------------------------------------------------------ AVX2 */

/* Taps 2p and 2p + 1 of 16 channels: the input bytes interleaved as the
 * weights are, widened, the offset added; one vpmaddwd per 8 channels adds
 * both taps' products. */
AVX2_INLINE void tap_pair16(__m128i x0, __m128i x1, const int16_t* w, __m256i offset, __m256i* acc0, __m256i* acc1) {
  const __m256i lo = _mm256_add_epi16(_mm256_cvtepi8_epi16(_mm_unpacklo_epi8(x0, x1)), offset);
  const __m256i hi = _mm256_add_epi16(_mm256_cvtepi8_epi16(_mm_unpackhi_epi8(x0, x1)), offset);
  *acc0 = _mm256_add_epi32(*acc0, _mm256_madd_epi16(lo, _mm256_loadu_si256((const __m256i*)(const void*)w)));
  *acc1 = _mm256_add_epi32(*acc1, _mm256_madd_epi16(hi, _mm256_loadu_si256((const __m256i*)(const void*)(w + 16))));
}

/* The same for 8 channels (the low 8 bytes of x0 and x1). */
AVX2_INLINE __m256i tap_pair8(__m128i x0, __m128i x1, const int16_t* w, __m256i offset, __m256i acc) {
  const __m256i x = _mm256_add_epi16(_mm256_cvtepi8_epi16(_mm_unpacklo_epi8(x0, x1)), offset);
  return _mm256_add_epi32(acc, _mm256_madd_epi16(x, _mm256_loadu_si256((const __m256i*)(const void*)w)));
}

/* 8 bytes at x, of which the first n are a tap's channels: read in place
 * unless they would cross `end` (the image's end), then through a copy; a
 * tap outside the image reads its zero points in place. */
AVX2_INLINE __m128i tap_bytes8(const int8_t* x, int outside, size_t n, const int8_t* end) {
  if (outside || x + 8 <= end) return _mm_loadl_epi64((const __m128i*)(const void*)x);
  int8_t copy[8] = {0};
  memcpy(copy, x, n);
  return _mm_loadl_epi64((const __m128i*)(const void*)copy);
}

/* What the AVX2 channel loop of one output pixel needs beside its taps:
 * channels [start, full) run in blocks of 16, [full, c8) in one block of 8
 * if there are 8 more, [c8, ch) are the last 0..7, whose requantization
 * parameters are zero-filled to 8 lanes once. */
typedef struct {
  const tvmd_cmsis_depthwise_conv_params_t* p;
  const int32_t* bias;
  const int8_t* end; /* the image's end */
  int32_t pairs;
  size_t start, full, c8, left;
  int32_t t_bias[8], t_mult[8], t_shift[8];
} channels_avx2_t;

static inline void channels_avx2_init(channels_avx2_t* d, const tvmd_cmsis_depthwise_conv_params_t* p,
                                      const int8_t* input, const int32_t* bias, size_t start) {
  const size_t ch = (size_t)p->out_ch;
  memset(d, 0, sizeof(*d));
  d->p = p;
  d->bias = bias;
  d->end = input + (size_t)p->in_h * (size_t)p->in_w * ch;
  d->pairs = (p->filter_h * p->filter_w + 1) / 2;
  d->start = start;
  d->full = start + ((ch - start) & ~(size_t)15);
  d->c8 = ch - d->full >= 8 ? d->full + 8 : d->full;
  d->left = ch - d->c8;
  if (d->left) {
    if (bias != NULL) memcpy(d->t_bias, bias + d->c8, d->left * sizeof(int32_t));
    memcpy(d->t_mult, p->multiplier + d->c8, d->left * sizeof(int32_t));
    memcpy(d->t_shift, p->shift + d->c8, d->left * sizeof(int32_t));
  }
}

/* Channels [d->start, ch) of one output pixel. */
AVX2_INLINE void channels_avx2(const channels_avx2_t* d, const taps_t* tp, int inside, int8_t* out) {
  const tvmd_cmsis_depthwise_conv_params_t* p = d->p;
  const int32_t* bias = d->bias;
  const size_t cp = (size_t)p->cp;
  const __m256i offset = _mm256_set1_epi16((int16_t)p->q.input_offset);
  for (size_t c0 = d->start; c0 < d->full; c0 += 16) {
    __m256i acc0 = _mm256_setzero_si256(), acc1 = acc0;
    for (int32_t pr = 0; pr < d->pairs; pr++) {
      tap_pair16(_mm_loadu_si128((const __m128i*)(const void*)tap_at(tp, inside, 2 * pr, c0)),
                 _mm_loadu_si128((const __m128i*)(const void*)tap_at(tp, inside, 2 * pr + 1, c0)),
                 p->weights + ((size_t)pr * cp + c0) * 2, offset, &acc0, &acc1);
    }
    const __m256i y0 = finish8(acc0, bias ? bias + c0 : NULL, p->multiplier + c0, p->shift + c0, &p->q);
    const __m256i y1 = finish8(acc1, bias ? bias + c0 + 8 : NULL, p->multiplier + c0 + 8, p->shift + c0 + 8, &p->q);
    _mm_storeu_si128((__m128i*)(void*)(out + c0), narrow16(y0, y1));
  }
  if (d->c8 > d->full) {
    const size_t c0 = d->full;
    __m256i acc = _mm256_setzero_si256();
    for (int32_t pr = 0; pr < d->pairs; pr++) {
      acc = tap_pair8(_mm_loadl_epi64((const __m128i*)(const void*)tap_at(tp, inside, 2 * pr, c0)),
                      _mm_loadl_epi64((const __m128i*)(const void*)tap_at(tp, inside, 2 * pr + 1, c0)),
                      p->weights + ((size_t)pr * cp + c0) * 2, offset, acc);
    }
    const __m256i y = finish8(acc, bias ? bias + c0 : NULL, p->multiplier + c0, p->shift + c0, &p->q);
    _mm_storel_epi64((__m128i*)(void*)(out + c0), narrow16(y, y));
  }
  if (d->left) {
    const size_t c0 = d->c8;
    __m256i acc = _mm256_setzero_si256();
    for (int32_t pr = 0; pr < d->pairs; pr++) {
      acc = tap_pair8(tap_bytes8(tap_at(tp, inside, 2 * pr, c0), tap_outside(tp, inside, 2 * pr), d->left, d->end),
                      tap_bytes8(tap_at(tp, inside, 2 * pr + 1, c0), tap_outside(tp, inside, 2 * pr + 1), d->left,
                                 d->end),
                      p->weights + ((size_t)pr * cp + c0) * 2, offset, acc);
    }
    const __m256i y = finish8(acc, d->t_bias, d->t_mult, d->t_shift, &p->q);
    int8_t t_out[16];
    _mm_storeu_si128((__m128i*)(void*)t_out, narrow16(y, y));
    memcpy(out + c0, t_out, d->left);
  }
}

AVX2 void tvmd_cmsis_depthwise_avx2(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* input,
                                    const int32_t* bias, int8_t* output) {
  channels_avx2_t d;
  channels_avx2_init(&d, p, input, bias, 0);
  int8_t zero_points[16];
  memset(zero_points, -p->q.input_offset, sizeof(zero_points));
  size_t offsets[TVMD_CMSIS_DW_MAX_TAPS + 1], mask[TVMD_CMSIS_DW_MAX_TAPS + 1];
  const int8_t* src[TVMD_CMSIS_DW_MAX_TAPS + 1];
  taps_t tp;
  taps_init(p, zero_points, offsets, src, mask, &tp);
  for (int32_t oy = 0; oy < p->out_h; oy++) {
    for (int32_t ox = 0; ox < p->out_w; ox++) {
      int8_t* out = output + ((size_t)oy * (size_t)p->out_w + (size_t)ox) * (size_t)p->out_ch;
      if (pixel_taps(p, input, zero_points, oy, ox, &tp)) {
        channels_avx2(&d, &tp, 1, out);
      } else {
        channels_avx2(&d, &tp, 0, out);
      }
    }
  }
}

/* --------------------------------------------------------------- AVX-512 */

/* 32 channels from c0: the bytes' 64-bit quarters reordered (0, 2, 1, 3) so
 * the per-128-bit-lane unpacks give channels 0..15 and 16..31 in order, one
 * vpmaddwd per 16 channels and tap pair. */
AVX512_INLINE void block32_avx512(const tvmd_cmsis_depthwise_conv_params_t* p, const taps_t* tp, int inside,
                                  int32_t pairs, size_t c0, const int32_t* bias, int8_t* out) {
  const __m512i offset = _mm512_set1_epi16((int16_t)p->q.input_offset);
  __m512i acc0 = _mm512_setzero_si512(), acc1 = acc0;
  for (int32_t pr = 0; pr < pairs; pr++) {
    const __m256i x0 = _mm256_loadu_si256((const __m256i*)(const void*)tap_at(tp, inside, 2 * pr, c0));
    const __m256i x1 = _mm256_loadu_si256((const __m256i*)(const void*)tap_at(tp, inside, 2 * pr + 1, c0));
    const __m256i b0 = _mm256_permute4x64_epi64(x0, 0xD8), b1 = _mm256_permute4x64_epi64(x1, 0xD8);
    const __m512i lo = _mm512_add_epi16(_mm512_cvtepi8_epi16(_mm256_unpacklo_epi8(b0, b1)), offset);
    const __m512i hi = _mm512_add_epi16(_mm512_cvtepi8_epi16(_mm256_unpackhi_epi8(b0, b1)), offset);
    const int16_t* w = p->weights + ((size_t)pr * (size_t)p->cp + c0) * 2;
    acc0 = _mm512_add_epi32(acc0, _mm512_madd_epi16(lo, _mm512_loadu_si512((const void*)w)));
    acc1 = _mm512_add_epi32(acc1, _mm512_madd_epi16(hi, _mm512_loadu_si512((const void*)(w + 32))));
  }
  store16_s8_avx512(acc0, bias ? bias + c0 : NULL, p->multiplier + c0, p->shift + c0, &p->q, out + c0,
                    (__mmask16)0xFFFF);
  store16_s8_avx512(acc1, bias ? bias + c0 + 16 : NULL, p->multiplier + c0 + 16, p->shift + c0 + 16, &p->q,
                    out + c0 + 16, (__mmask16)0xFFFF);
}

/* The last 0..31 channels of an AVX-512 pixel: the AVX2 blocks, compiled
 * for AVX2 alone (inlined into the AVX-512 loop they measured ~25% slower). */
static __attribute__((noinline)) AVX2 void channels_avx2_call(const channels_avx2_t* d, const taps_t* tp,
                                                              int inside, int8_t* out) {
  if (inside) {
    channels_avx2(d, tp, 1, out);
  } else {
    channels_avx2(d, tp, 0, out);
  }
}

/* Blocks of 32 channels in 512-bit registers, the last 0..31 channels
 * through the AVX2 blocks (fewer than 32 channels: the AVX2 function):
 * measured on an AVX-512 CPU that runs 512-bit operations in two halves
 * (AMD Zen 4), 32 channels in 512-bit registers were faster than AVX2's two
 * blocks of 16, and a block of 16 or fewer channels in one 512-bit register
 * (masked loads and stores) slower than AVX2's. */
AVX512 void tvmd_cmsis_depthwise_avx512(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* input,
                                        const int32_t* bias, int8_t* output) {
  const size_t ch = (size_t)p->out_ch, blocks_end = ch & ~(size_t)31;
  if (blocks_end == 0) {
    tvmd_cmsis_depthwise_avx2(p, input, bias, output);
    return;
  }
  channels_avx2_t d;
  channels_avx2_init(&d, p, input, bias, blocks_end);
  int8_t zero_points[32];
  memset(zero_points, -p->q.input_offset, sizeof(zero_points));
  size_t offsets[TVMD_CMSIS_DW_MAX_TAPS + 1], mask[TVMD_CMSIS_DW_MAX_TAPS + 1];
  const int8_t* src[TVMD_CMSIS_DW_MAX_TAPS + 1];
  taps_t tp;
  taps_init(p, zero_points, offsets, src, mask, &tp);
  for (int32_t oy = 0; oy < p->out_h; oy++) {
    for (int32_t ox = 0; ox < p->out_w; ox++) {
      int8_t* out = output + ((size_t)oy * (size_t)p->out_w + (size_t)ox) * ch;
      const int inside = pixel_taps(p, input, zero_points, oy, ox, &tp);
      if (inside) {
        for (size_t c0 = 0; c0 < blocks_end; c0 += 32) block32_avx512(p, &tp, 1, d.pairs, c0, bias, out);
      } else {
        for (size_t c0 = 0; c0 < blocks_end; c0 += 32) block32_avx512(p, &tp, 0, d.pairs, c0, bias, out);
      }
      if (blocks_end < ch) channels_avx2_call(&d, &tp, inside, out);
    }
  }
}

#endif /* TVMD_CMSIS_X86 */
