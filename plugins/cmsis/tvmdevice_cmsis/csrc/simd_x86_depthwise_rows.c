/*
 * DEPTHWISE_CONV_2D with depth multiplier 1 on AVX-512 from widened pair
 * rows: each input row is widened once into scratch as int16 pairs,
 * column i holding, per channel, (x[i] + input_offset, x[i + dilation_w] +
 * input_offset), zero outside the image (padded coordinates).  A filter
 * row's taps fx and fx + 1 of an output pixel are then one 512-bit load of
 * 16 channels' pairs and one vpmaddwd against the weights (fx, fx + 1)
 * (an odd last tap paired with a zero weight): no byte shuffles per tap,
 * which bound simd_x86_depthwise.c's loop (two interleaves and two widenings
 * per tap pair and 32 channels), and no border case: a tap outside the image
 * reads a 0, exactly what the reference's skipped tap adds.
 *
 * Scratch (tvmd_cmsis_depthwise_rows_bytes): a ring of the (filter_h - 1) *
 * dilation_h + 1 padded rows one output row reads, each row built when an
 * output row first needs it, then the weights as [filter_h][(filter_w + 1)
 * / 2][cp][2] int16 row pairs, laid out from the tap-pair packing per call.
 * The channel loop is outermost within an output row, so the compiler keeps
 * a block's requantization parameters and their derived shifts in registers
 * across the row's pixels.
 */
#include "internal.h"

#if TVMD_CMSIS_X86

#include <string.h>

#include "simd_x86_requantize.h"

#define VNNI512 TVMD_X86_TARGET("avx512f,avx512bw,avx512vnni")

/* The padded columns one output row's taps read, plus the partner column of
 * the last one. */
static inline int32_t pair_cols(const tvmd_cmsis_depthwise_conv_params_t* p) {
  return (p->out_w - 1) * p->stride_w + (p->filter_w - 1) * p->dilation_w + 1 + p->dilation_w;
}

static inline int32_t ring_rows(const tvmd_cmsis_depthwise_conv_params_t* p) {
  return (p->filter_h - 1) * p->dilation_h + 1;
}

static inline size_t row_bytes(const tvmd_cmsis_depthwise_conv_params_t* p) {
  return (size_t)pair_cols(p) * (size_t)p->cp * 2 * sizeof(int16_t);
}

static inline size_t weight_bytes(const tvmd_cmsis_depthwise_conv_params_t* p) {
  return (size_t)p->filter_h * (size_t)((p->filter_w + 1) / 2) * (size_t)p->cp * 2 * sizeof(int16_t);
}

/* The most rows the ring holds. */
#define MAX_RING 64

size_t tvmd_cmsis_depthwise_rows_bytes(const tvmd_cmsis_depthwise_conv_params_t* p) {
  if (p->depth_multiplier != 1 || p->filter_h * p->filter_w > TVMD_CMSIS_DW_MAX_TAPS) return 0;
  if (ring_rows(p) > MAX_RING) return 0;
  const size_t ring = (size_t)ring_rows(p) * row_bytes(p);
  if (ring > TVMD_CMSIS_CONV_BAND_BYTES) return 0;
  return ((ring + 63u) & ~(size_t)63u) + weight_bytes(p);
}

/* Padded row pr of the image as pair columns (zeros outside the image). */
AVX2_INLINE void build_row(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* input, int32_t pr,
                           int16_t* row) {
  const int32_t iy = pr - p->pad_h, cols = pair_cols(p), ch = p->in_ch, cp = p->cp, d = p->dilation_w;
  if (iy < 0 || iy >= p->in_h) {
    memset(row, 0, row_bytes(p));
    return;
  }
  const int8_t* line = input + (size_t)iy * (size_t)p->in_w * (size_t)ch;
  const int16_t offset = (int16_t)p->q.input_offset;
  const __m256i voff = _mm256_set1_epi16(offset);
  int8_t zero_points[16];
  memset(zero_points, (int8_t)-p->q.input_offset, sizeof(zero_points));
  const int32_t full = ch & ~15;
  for (int32_t i = 0; i < cols; i++) {
    const int32_t ix = i - p->pad_w, ix2 = ix + d;
    const int in1 = ix >= 0 && ix < p->in_w, in2 = ix2 >= 0 && ix2 < p->in_w;
    const int8_t* a = in1 ? line + (size_t)ix * (size_t)ch : zero_points;
    const int8_t* b = in2 ? line + (size_t)ix2 * (size_t)ch : zero_points;
    const size_t sa = in1 ? 1 : 0, sb = in2 ? 1 : 0; /* the zero points are one block, reread */
    int16_t* dst = row + (size_t)i * (size_t)cp * 2;
    int32_t c = 0;
    for (; c < full; c += 16) {
      const __m128i xa = _mm_loadu_si128((const __m128i*)(const void*)(a + (size_t)c * sa));
      const __m128i xb = _mm_loadu_si128((const __m128i*)(const void*)(b + (size_t)c * sb));
      const __m256i lo = _mm256_add_epi16(_mm256_cvtepi8_epi16(_mm_unpacklo_epi8(xa, xb)), voff);
      const __m256i hi = _mm256_add_epi16(_mm256_cvtepi8_epi16(_mm_unpackhi_epi8(xa, xb)), voff);
      _mm256_storeu_si256((__m256i*)(void*)(dst + 2 * (size_t)c), lo);
      _mm256_storeu_si256((__m256i*)(void*)(dst + 2 * (size_t)c + 16), hi);
    }
    for (; c < ch; c++) {
      dst[2 * c] = (int16_t)(in1 ? a[c] + offset : 0);
      dst[2 * c + 1] = (int16_t)(in2 ? b[c] + offset : 0);
    }
    for (; c < cp; c++) dst[2 * c] = dst[2 * c + 1] = 0;
  }
}

/* The weights as row pairs: [fy][q][c] = (tap (fy, 2q), tap (fy, 2q + 1) or
 * 0), from the tap-pair packing [t / 2][c][t & 1]. */
static void row_pair_weights(const tvmd_cmsis_depthwise_conv_params_t* p, int16_t* w) {
  const int32_t kw = p->filter_w, qn = (kw + 1) / 2, cp = p->cp;
  for (int32_t fy = 0; fy < p->filter_h; fy++) {
    for (int32_t q = 0; q < qn; q++) {
      int16_t* dst = w + ((size_t)(fy * qn + q) * (size_t)cp) * 2;
      for (int32_t k = 0; k < 2; k++) {
        const int32_t fx = 2 * q + k;
        if (fx >= kw) {
          for (int32_t c = 0; c < cp; c++) dst[2 * c + k] = 0;
          continue;
        }
        const int32_t t = fy * kw + fx;
        const int16_t* src = p->weights + (size_t)(t / 2) * (size_t)cp * 2 + (size_t)(t & 1);
        for (int32_t c = 0; c < cp; c++) dst[2 * c + k] = src[2 * c];
      }
    }
  }
}

/* The requantization of one block of 16 channels with its operands in
 * registers for a whole output row: read through pointers, they were
 * reloaded after every int8 store (which may alias them), and what the
 * shifts give was recomputed per pixel. */
typedef struct {
  __m512i bias, multiplier, multiplier_odd, left, right, round, out_offset, act_min, act_max;
  size_t live;  /* channels stored */
  int any_left; /* some channel shifts left (most depthwise layers' multipliers are below 1: none does) */
} block_quant_t;

AVX512_INLINE block_quant_t block_quant(const tvmd_cmsis_depthwise_conv_params_t* p, const int32_t* bias, int32_t c0) {
  block_quant_t bq;
  const __mmask16 live = tvmd_cmsis_live16(p->out_ch - c0);
  const __m512i zero = _mm512_setzero_si512(), shift = _mm512_maskz_loadu_epi32(live, p->shift + c0);
  bq.bias = bias ? _mm512_maskz_loadu_epi32(live, bias + c0) : zero;
  bq.multiplier = _mm512_maskz_loadu_epi32(live, p->multiplier + c0);
  bq.multiplier_odd = _mm512_srli_epi64(bq.multiplier, 32);
  bq.left = _mm512_max_epi32(shift, zero);
  bq.right = _mm512_max_epi32(_mm512_sub_epi32(zero, shift), zero);
  bq.round = _mm512_srli_epi32(_mm512_sllv_epi32(_mm512_set1_epi32(1), bq.right), 1); /* 2^(right - 1), or 0 */
  bq.out_offset = _mm512_set1_epi32(p->q.output_offset);
  bq.act_min = _mm512_set1_epi32(p->q.act_min);
  bq.act_max = _mm512_set1_epi32(p->q.act_max);
  bq.live = (size_t)tvmd_cmsis_min(16, p->out_ch - c0);
  bq.any_left = _mm512_test_epi32_mask(bq.left, bq.left) != 0;
  return bq;
}

/* The sums of 16 channels, bias added, to int8, stored (the left shift
 * skipped where no channel has one).  The math
 * of requantize16 (simd_x86_requantize.h) with gemmlowp's rounding divide
 * by 2^right done on the magnitude: RoundingDivideByPOT rounds half away
 * from zero, which is sign(h) * ((|h| + 2^(right - 1)) >> right), |h| <=
 * 2^31 and the sum below 2^32 as unsigned: one operation fewer than the
 * remainder-threshold form, the same values. */
AVX512_INLINE void store_sum(const block_quant_t* bq, __m512i sum, int8_t* dst) {
  const __m512i zero = _mm512_setzero_si512(), nudge = _mm512_set1_epi64((int64_t)1 << 30);
  const __m512i a = bq->any_left ? _mm512_sllv_epi32(sum, bq->left) : sum;
  const __m512i even = _mm512_add_epi64(_mm512_mul_epi32(a, bq->multiplier), nudge);
  const __m512i odd = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), bq->multiplier_odd), nudge);
  const __m512i high = _mm512_mask_blend_epi32((__mmask16)0xAAAA, _mm512_srli_epi64(even, 31),
                                               _mm512_slli_epi64(odd, 1));
  const __m512i magnitude = _mm512_srlv_epi32(_mm512_add_epi32(_mm512_abs_epi32(high), bq->round), bq->right);
  __m512i y = _mm512_mask_sub_epi32(magnitude, _mm512_cmpgt_epi32_mask(zero, high), zero, magnitude);
  y = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(y, bq->out_offset), bq->act_min), bq->act_max);
  const __m128i bytes = _mm512_cvtepi32_epi8(y);
  if (bq->live == 16) {
    _mm_storeu_si128((__m128i*)(void*)dst, bytes);
  } else {
    int8_t t[16];
    _mm_storeu_si128((__m128i*)(void*)t, bytes);
    memcpy(dst, t, bq->live);
  }
}

/* The same from sums without their bias. */
AVX512_INLINE void store_block(const block_quant_t* bq, __m512i acc, int8_t* dst) {
  store_sum(bq, _mm512_add_epi32(acc, bq->bias), dst);
}

/* One output row of any filter: rows[fy] is the pair row filter row fy
 * reads. */
AVX512_INLINE void output_row(const tvmd_cmsis_depthwise_conv_params_t* p, const int16_t* const* rows,
                              const int16_t* w, const int32_t* bias, int8_t* out) {
  const int32_t kh = p->filter_h, qn = (p->filter_w + 1) / 2, cp = p->cp, out_ch = p->out_ch, out_w = p->out_w;
  const size_t col_step = (size_t)p->stride_w * (size_t)cp * 2, q_step = 2 * (size_t)p->dilation_w * (size_t)cp * 2;
  for (int32_t c0 = 0; c0 < out_ch; c0 += 16) {
    const block_quant_t bq = block_quant(p, bias, c0);
    for (int32_t ox = 0; ox < out_w; ox++) {
      __m512i acc0 = _mm512_setzero_si512(), acc1 = acc0;
      for (int32_t fy = 0; fy < kh; fy++) {
        const int16_t* x = rows[fy] + (size_t)ox * col_step + 2 * (size_t)c0;
        const int16_t* wr = w + ((size_t)(fy * qn) * (size_t)cp + (size_t)c0) * 2;
        for (int32_t q = 0; q < qn; q++) {
          const __m512i prod = _mm512_madd_epi16(_mm512_loadu_si512((const void*)(x + (size_t)q * q_step)),
                                                 _mm512_loadu_si512((const void*)(wr + (size_t)q * (size_t)cp * 2)));
          if (q & 1) {
            acc1 = _mm512_add_epi32(acc1, prod);
          } else {
            acc0 = _mm512_add_epi32(acc0, prod);
          }
        }
      }
      store_block(&bq, _mm512_add_epi32(acc0, acc1), out + (size_t)ox * (size_t)out_ch + (size_t)c0);
    }
  }
}

/* One output row of a 3x3 filter: per block of 16 channels its six weight
 * row pairs stay in registers across the row, each pixel six loads and six
 * multiply-adds: vpmaddwd and vpaddd, or on AVX-512 VNNI one vpdpwssd
 * (ROW3X3_MAC; the same int32 sums), whose first one starts from the bias
 * (ROW3X3_FIRST, then ROW3X3_STORE takes the sum as it is). */
#define ROW3X3(name, target, ROW3X3_FIRST, ROW3X3_MAC, ROW3X3_STORE)                                                                      \
  static __attribute__((noinline)) target void name(const tvmd_cmsis_depthwise_conv_params_t* p,              \
                                                    const int16_t* const* rows, const int16_t* w,             \
                                                    const int32_t* bias, int8_t* out) {                       \
    const int32_t cp = p->cp, out_ch = p->out_ch, out_w = p->out_w;                                           \
    const size_t col_step = (size_t)p->stride_w * (size_t)cp * 2;                                             \
    const size_t q_step = 2 * (size_t)p->dilation_w * (size_t)cp * 2, wstep = (size_t)cp * 2;                 \
    const int16_t *const r0 = rows[0], *const r1 = rows[1], *const r2 = rows[2];                              \
    for (int32_t c0 = 0; c0 < out_ch; c0 += 16) {                                                             \
      const block_quant_t bq = block_quant(p, bias, c0);                                                      \
      const int16_t* wc = w + 2 * (size_t)c0;                                                                 \
      const __m512i w00 = _mm512_loadu_si512((const void*)wc);                                                \
      const __m512i w01 = _mm512_loadu_si512((const void*)(wc + wstep));                                      \
      const __m512i w10 = _mm512_loadu_si512((const void*)(wc + 2 * wstep));                                  \
      const __m512i w11 = _mm512_loadu_si512((const void*)(wc + 3 * wstep));                                  \
      const __m512i w20 = _mm512_loadu_si512((const void*)(wc + 4 * wstep));                                  \
      const __m512i w21 = _mm512_loadu_si512((const void*)(wc + 5 * wstep));                                  \
      for (int32_t ox = 0; ox < out_w; ox++) {                                                                \
        const size_t at = 2 * (size_t)c0 + (size_t)ox * col_step;                                             \
        __m512i a = ROW3X3_FIRST(bq.bias, _mm512_loadu_si512((const void*)(r0 + at)), w00);                  \
        __m512i b = _mm512_madd_epi16(_mm512_loadu_si512((const void*)(r0 + at + q_step)), w01);             \
        a = ROW3X3_MAC(a, _mm512_loadu_si512((const void*)(r1 + at)), w10);                                   \
        b = ROW3X3_MAC(b, _mm512_loadu_si512((const void*)(r1 + at + q_step)), w11);                          \
        a = ROW3X3_MAC(a, _mm512_loadu_si512((const void*)(r2 + at)), w20);                                   \
        b = ROW3X3_MAC(b, _mm512_loadu_si512((const void*)(r2 + at + q_step)), w21);                          \
        ROW3X3_STORE(&bq, _mm512_add_epi32(a, b), out + (size_t)ox * (size_t)out_ch + (size_t)c0);           \
      }                                                                                                       \
    }                                                                                                         \
  }
#define MAC_MADD(acc, x, w) _mm512_add_epi32((acc), _mm512_madd_epi16((x), (w)))
#define FIRST_MADD(bias, x, w) _mm512_madd_epi16((x), (w))
ROW3X3(row3x3_avx512, AVX512, FIRST_MADD, MAC_MADD, store_block)
ROW3X3(row3x3_vnni512, VNNI512, _mm512_dpwssd_epi32, _mm512_dpwssd_epi32, store_sum)
#undef ROW3X3

/* Eight channels or fewer, stride 1 along x: a pair column holds 8
 * channels (16 int16, 256 bits), so one 512-bit load takes the same tap of
 * two neighbouring output pixels and one register carries two pixels, where
 * the 16-channel layout left half of every lane idle.  The rows keep the
 * ring's slots (a narrow row is at most half of one). */
static inline int narrow_rows(const tvmd_cmsis_depthwise_conv_params_t* p) {
  return p->in_ch <= 8 && p->stride_w == 1 && p->filter_h == 3 && p->filter_w == 3;
}

/* Padded row pr as narrow pair columns: column i at 16 int16. */
AVX512_INLINE void build_row8(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* input, int32_t pr,
                              int16_t* row) {
  const int32_t iy = pr - p->pad_h, cols = pair_cols(p), ch = p->in_ch, d = p->dilation_w;
  if (iy < 0 || iy >= p->in_h) {
    memset(row, 0, (size_t)cols * 16 * sizeof(int16_t));
    return;
  }
  const int8_t* line = input + (size_t)iy * (size_t)p->in_w * (size_t)ch;
  const __m256i voff = _mm256_set1_epi16((int16_t)p->q.input_offset);
  /* Lanes kept by which of the pair's two columns lie inside the image. */
  const __m256i keep[4] = {_mm256_setzero_si256(), _mm256_set1_epi32(0x0000FFFF), _mm256_set1_epi32((int32_t)0xFFFF0000u),
                           _mm256_set1_epi32(-1)};
  for (int32_t i = 0; i < cols; i++) {
    const int32_t ix = i - p->pad_w, ix2 = ix + d;
    const int in1 = ix >= 0 && ix < p->in_w, in2 = ix2 >= 0 && ix2 < p->in_w;
    __m128i xa = _mm_setzero_si128(), xb = xa;
    if (ch == 8) {
      if (in1) xa = _mm_loadl_epi64((const __m128i*)(const void*)(line + (size_t)ix * 8));
      if (in2) xb = _mm_loadl_epi64((const __m128i*)(const void*)(line + (size_t)ix2 * 8));
    } else {
      int8_t ta[16] = {0}, tb[16] = {0};
      if (in1) memcpy(ta, line + (size_t)ix * (size_t)ch, (size_t)ch);
      if (in2) memcpy(tb, line + (size_t)ix2 * (size_t)ch, (size_t)ch);
      xa = _mm_loadu_si128((const __m128i*)(const void*)ta);
      xb = _mm_loadu_si128((const __m128i*)(const void*)tb);
    }
    const __m256i v = _mm256_add_epi16(_mm256_cvtepi8_epi16(_mm_unpacklo_epi8(xa, xb)), voff);
    _mm256_storeu_si256((__m256i*)(void*)(row + (size_t)i * 16), _mm256_and_si256(v, keep[in1 | (in2 << 1)]));
  }
}

/* Channels [0, 8) of a per-channel int32 array in both halves. */
AVX512_INLINE __m512i twice8(const int32_t* src, int32_t n) {
  int32_t t[8] = {0};
  memcpy(t, src, (size_t)n * sizeof(int32_t));
  const __m256i v = _mm256_loadu_si256((const __m256i*)(const void*)t);
  return _mm512_inserti64x4(_mm512_castsi256_si512(v), v, 1);
}

/* block_quant's operands for two pixels of up to 8 channels. */
AVX512_INLINE block_quant_t block_quant8(const tvmd_cmsis_depthwise_conv_params_t* p, const int32_t* bias) {
  block_quant_t bq;
  const int32_t n = p->out_ch;
  const __m512i zero = _mm512_setzero_si512(), shift = twice8(p->shift, n);
  bq.bias = bias ? twice8(bias, n) : zero;
  bq.multiplier = twice8(p->multiplier, n);
  bq.multiplier_odd = _mm512_srli_epi64(bq.multiplier, 32);
  bq.left = _mm512_max_epi32(shift, zero);
  bq.right = _mm512_max_epi32(_mm512_sub_epi32(zero, shift), zero);
  bq.round = _mm512_srli_epi32(_mm512_sllv_epi32(_mm512_set1_epi32(1), bq.right), 1);
  bq.out_offset = _mm512_set1_epi32(p->q.output_offset);
  bq.act_min = _mm512_set1_epi32(p->q.act_min);
  bq.act_max = _mm512_set1_epi32(p->q.act_max);
  bq.live = 16;
  bq.any_left = _mm512_test_epi32_mask(bq.left, bq.left) != 0;
  return bq;
}

/* One output row of a 3x3 filter on narrow pair rows, two pixels a step:
 * the six weight row pairs of the (at most) 8 channels in both halves. */
#define ROW3X3_8(name, target, ROW3X3_FIRST, ROW3X3_MAC, ROW3X3_STORE)                                                                    \
  static __attribute__((noinline)) target void name(const tvmd_cmsis_depthwise_conv_params_t* p,              \
                                                    const int16_t* const* rows, const int16_t* w,             \
                                                    const int32_t* bias, int8_t* out) {                       \
    const int32_t ch = p->out_ch, out_w = p->out_w;                                                           \
    const size_t q_step = 2 * (size_t)p->dilation_w * 16, wstep = (size_t)p->cp * 2;                         \
    const int16_t *const r0 = rows[0], *const r1 = rows[1], *const r2 = rows[2];                              \
    const block_quant_t bq = block_quant8(p, bias);                                                           \
    const __m512i w00 = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i*)(const void*)w));          \
    const __m512i w01 = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i*)(const void*)(w + wstep)));  \
    const __m512i w10 =                                                                                       \
        _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i*)(const void*)(w + 2 * wstep)));             \
    const __m512i w11 =                                                                                       \
        _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i*)(const void*)(w + 3 * wstep)));             \
    const __m512i w20 =                                                                                       \
        _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i*)(const void*)(w + 4 * wstep)));             \
    const __m512i w21 =                                                                                       \
        _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i*)(const void*)(w + 5 * wstep)));             \
    for (int32_t ox = 0; ox < out_w; ox += 2) {                                                               \
      const size_t at = (size_t)ox * 16;                                                                      \
      __m512i a = ROW3X3_FIRST(bq.bias, _mm512_loadu_si512((const void*)(r0 + at)), w00);                    \
      __m512i b = _mm512_madd_epi16(_mm512_loadu_si512((const void*)(r0 + at + q_step)), w01);               \
      a = ROW3X3_MAC(a, _mm512_loadu_si512((const void*)(r1 + at)), w10);                                     \
      b = ROW3X3_MAC(b, _mm512_loadu_si512((const void*)(r1 + at + q_step)), w11);                            \
      a = ROW3X3_MAC(a, _mm512_loadu_si512((const void*)(r2 + at)), w20);                                     \
      b = ROW3X3_MAC(b, _mm512_loadu_si512((const void*)(r2 + at + q_step)), w21);                            \
      int8_t* dst = out + (size_t)ox * (size_t)ch;                                                            \
      if (ch == 8 && ox + 1 < out_w) {                                                                        \
        ROW3X3_STORE(&bq, _mm512_add_epi32(a, b), dst);                                                       \
      } else {                                                                                                \
        int8_t t[16];                                                                                         \
        ROW3X3_STORE(&bq, _mm512_add_epi32(a, b), t);                                                         \
        memcpy(dst, t, (size_t)ch);                                                                           \
        if (ox + 1 < out_w) memcpy(dst + ch, t + 8, (size_t)ch);                                              \
      }                                                                                                       \
    }                                                                                                         \
  }
ROW3X3_8(row3x3_8_avx512, AVX512, FIRST_MADD, MAC_MADD, store_block)
ROW3X3_8(row3x3_8_vnni512, VNNI512, _mm512_dpwssd_epi32, _mm512_dpwssd_epi32, store_sum)
#undef FIRST_MADD
#undef MAC_MADD
#undef ROW3X3_8

AVX512 void tvmd_cmsis_depthwise_rows_avx512(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* input,
                                             const int32_t* bias, int8_t* output, void* scratch, int vnni) {
  const int32_t span = ring_rows(p);
  const size_t rb = row_bytes(p), ring = (size_t)span * rb;
  int16_t* w = (int16_t*)(void*)((uint8_t*)scratch + ((ring + 63u) & ~(size_t)63u));
  row_pair_weights(p, w);
  int32_t have[MAX_RING]; /* the padded row each ring slot holds */
  for (int32_t s = 0; s < span; s++) have[s] = -1;
  const int16_t* rows[TVMD_CMSIS_DW_MAX_TAPS];
  const int is3x3 = p->filter_h == 3 && p->filter_w == 3, narrow = narrow_rows(p);
  for (int32_t oy = 0; oy < p->out_h; oy++) {
    for (int32_t fy = 0; fy < p->filter_h; fy++) {
      const int32_t pr = oy * p->stride_h + fy * p->dilation_h, s = pr % span;
      int16_t* row = (int16_t*)(void*)((uint8_t*)scratch + (size_t)s * rb);
      if (have[s] != pr) {
        if (narrow) {
          build_row8(p, input, pr, row);
        } else {
          build_row(p, input, pr, row);
        }
        have[s] = pr;
      }
      rows[fy] = row;
    }
    int8_t* out = output + (size_t)oy * (size_t)p->out_w * (size_t)p->out_ch;
    if (narrow && vnni) {
      row3x3_8_vnni512(p, rows, w, bias, out);
    } else if (narrow) {
      row3x3_8_avx512(p, rows, w, bias, out);
    } else if (is3x3 && vnni) {
      row3x3_vnni512(p, rows, w, bias, out);
    } else if (is3x3) {
      row3x3_avx512(p, rows, w, bias, out);
    } else {
      output_row(p, rows, w, bias, out);
    }
  }
}

#endif /* TVMD_CMSIS_X86 */
