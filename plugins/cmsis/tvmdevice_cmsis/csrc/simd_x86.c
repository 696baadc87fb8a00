/*
 * x86-64 AVX-512 and AVX2 versions of the hot loops: the int16 GEMM tile and
 * the requantization (the depthwise convolution is simd_x86_depthwise.c).
 * Like CMSIS-NN's DSP/MVE paths, this is an optional accelerated path
 * beside the portable C one (gemm.c, requantize.c), chosen at run time from
 * the CPU's features, so one build runs on any x86-64 and firmware builds
 * compile none of it.  Both paths compute identical values; tests run every
 * kernel through each.
 *
 * Why intrinsics: the GEMM needs vpmaddwd on a broadcast input pair against
 * 16 columns of pair-interleaved weights (no horizontal sums), a form
 * compilers do not derive from C; and the requantization's 64-bit products
 * need vpmuldq on even and odd lanes rather than the slow vpmullq the
 * vectorizer picks.
 */
#include "internal.h"

#if TVMD_CMSIS_X86

#include <string.h>

#include "simd_x86_requantize.h" /* the intrinsics (simd_x86.h), AVX2 / AVX512 targets, requantization */

int tvmd_cmsis_cpu_levels(void) {
  int levels = 1 << TVMD_CMSIS_LEVEL_PORTABLE;
#if TVMD_CMSIS_SIMD_EMULATION
  levels |= (1 << TVMD_CMSIS_LEVEL_AVX2) | (1 << TVMD_CMSIS_LEVEL_AVX512) | (1 << TVMD_CMSIS_LEVEL_AVXVNNI) |
            (1 << TVMD_CMSIS_LEVEL_AVX512VNNI);
#else
  __builtin_cpu_init();
  const int avx2 = __builtin_cpu_supports("avx2");
  const int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  if (avx2) levels |= 1 << TVMD_CMSIS_LEVEL_AVX2;
  if (avx512) levels |= 1 << TVMD_CMSIS_LEVEL_AVX512;
  if (avx2 && __builtin_cpu_supports("avxvnni")) levels |= 1 << TVMD_CMSIS_LEVEL_AVXVNNI;
  if (avx512 && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni")) {
    levels |= 1 << TVMD_CMSIS_LEVEL_AVX512VNNI;
  }
#endif
  return levels;
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

AVX512 void tvmd_cmsis_requantize_avx512(const int32_t* acc, const int32_t* bias, const int32_t* multiplier,
                                         const int32_t* shift, int32_t n, const tvmd_cmsis_quant_t* q,
                                         int8_t* out) {
  for (int32_t i = 0; i < n; i += 16) {
    const __mmask16 live = tvmd_cmsis_live16(n - i);
    store16_s8_avx512(_mm512_maskz_loadu_epi32(live, acc + i), bias ? bias + i : NULL, multiplier + i, shift + i, q,
                      out + i, live);
  }
}

/* ------------------------------------------------------------------ AVX2 */

/* The AVX-512 tile with 8 columns per vector: the same pair-interleaved
 * weights (ldw is a multiple of 16, so two vectors cover each 16 columns). */
AVX2_INLINE void tile8(const int16_t* a, int32_t lda, int rows, int nv, int32_t pairs, const int32_t* w,
                       int32_t ldw, int32_t* out, int32_t ldo) {
  __m256i c[4][2];
  for (int r = 0; r < rows; r++) {
    for (int v = 0; v < nv; v++) c[r][v] = _mm256_setzero_si256();
  }
  for (int32_t p = 0; p < pairs; p++) {
    const int32_t* wp = w + (size_t)p * (size_t)ldw;
    __m256i b[2];
    for (int v = 0; v < nv; v++) b[v] = _mm256_loadu_si256((const __m256i*)(const void*)(wp + 8 * v));
    for (int r = 0; r < rows; r++) {
      int32_t pair;
      memcpy(&pair, a + (size_t)r * (size_t)lda + 2 * (size_t)p, sizeof(pair));
      const __m256i x = _mm256_set1_epi32(pair);
      for (int v = 0; v < nv; v++) c[r][v] = _mm256_add_epi32(c[r][v], _mm256_madd_epi16(x, b[v]));
    }
  }
  for (int r = 0; r < rows; r++) {
    for (int v = 0; v < nv; v++) {
      _mm256_storeu_si256((__m256i*)(void*)(out + (size_t)r * (size_t)ldo + 8 * v), c[r][v]);
    }
  }
}

AVX2_INLINE void row_block8(const int16_t* a, int32_t lda, int rows, int32_t pairs, const int32_t* w, int32_t ldw,
                            int32_t* out) {
  for (int32_t j = 0; j < ldw; j += 16) tile8(a, lda, rows, 2, pairs, w + j, ldw, out + j, ldw);
}

AVX2 void tvmd_cmsis_gemm_s16_avx2(const int16_t* a, int32_t lda, int32_t m, int32_t k_pairs, const int16_t* w,
                                   int32_t ldw, int32_t* acc) {
  const int32_t* w32 = (const int32_t*)(const void*)w;
  int32_t r = 0;
  for (; r + 4 <= m; r += 4) row_block8(a + (size_t)r * (size_t)lda, lda, 4, k_pairs, w32, ldw, acc + (size_t)r * ldw);
  for (; r < m; r++) row_block8(a + (size_t)r * (size_t)lda, lda, 1, k_pairs, w32, ldw, acc + (size_t)r * ldw);
}

AVX2 void tvmd_cmsis_requantize_avx2(const int32_t* acc, const int32_t* bias, const int32_t* multiplier,
                                     const int32_t* shift, int32_t n, const tvmd_cmsis_quant_t* q, int8_t* out) {
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i y0 = finish8(_mm256_loadu_si256((const __m256i*)(const void*)(acc + i)), bias ? bias + i : NULL,
                               multiplier + i, shift + i, q);
    const __m256i y1 = finish8(_mm256_loadu_si256((const __m256i*)(const void*)(acc + i + 8)),
                               bias ? bias + i + 8 : NULL, multiplier + i + 8, shift + i + 8, q);
    _mm_storeu_si128((__m128i*)(void*)(out + i), narrow16(y0, y1));
  }
  if (i < n) {
    /* The tail through zero-filled copies: no read or write past n. */
    int32_t t_acc[16] = {0}, t_bias[16] = {0}, t_mult[16] = {0}, t_shift[16] = {0};
    int8_t t_out[16];
    const size_t left = (size_t)(n - i);
    memcpy(t_acc, acc + i, left * sizeof(int32_t));
    if (bias != NULL) memcpy(t_bias, bias + i, left * sizeof(int32_t));
    memcpy(t_mult, multiplier + i, left * sizeof(int32_t));
    memcpy(t_shift, shift + i, left * sizeof(int32_t));
    const __m256i y0 = finish8(_mm256_loadu_si256((const __m256i*)(void*)t_acc), t_bias, t_mult, t_shift, q);
    const __m256i y1 = finish8(_mm256_loadu_si256((const __m256i*)(void*)(t_acc + 8)), t_bias + 8, t_mult + 8,
                               t_shift + 8, q);
    _mm_storeu_si128((__m128i*)(void*)t_out, narrow16(y0, y1));
    memcpy(out + i, t_out, left);
  }
}

/* Input values 2p and 2p + 1 of a row in every int32 lane. */
AVX2_INLINE __m256i broadcast_pair(const int16_t* a) {
  int32_t pair;
  memcpy(&pair, a, sizeof(pair));
  return _mm256_set1_epi32(pair);
}

/* Where a block of GEMM rows reads its values: row r's pair p of segment s
 * is at row[r] + s * seg_stride + 2 * p (p < seg_pairs), the weights' pair
 * index running on across segments.  im2col rows are one segment; a
 * convolution read in place from its bordered image has one segment per
 * filter row (that row's taps, filter_w * in_ch contiguous values). */
typedef struct {
  const int16_t* row[4];
  int32_t segments, seg_pairs;
  size_t seg_stride;
} rows_t;

/* A 4-row tile of 16 columns whose sums are requantized in registers and
 * written as int8 (the first live columns of each row).  The accumulators
 * are named, not an array: GCC then keeps all eight in registers (with an
 * array it spilled one, and the loop waited on the reload every pair). */
#define MADD8(c, x, b) ((c) = _mm256_add_epi32((c), _mm256_madd_epi16((x), (b))))
AVX2_INLINE void tile4_s8(const rows_t* a, const int32_t* w, int32_t ldw, const int32_t* bias,
                          const int32_t* multiplier, const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out,
                          int32_t ldo, size_t live) {
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  const int32_t* wp = w;
  for (int32_t s = 0; s < a->segments; s++) {
    const size_t at = (size_t)s * a->seg_stride;
    const int16_t *a0 = a->row[0] + at, *a1 = a->row[1] + at, *a2 = a->row[2] + at, *a3 = a->row[3] + at;
    for (int32_t p = 0; p < a->seg_pairs; p++, wp += ldw) {
      const __m256i b0 = _mm256_loadu_si256((const __m256i*)(const void*)wp);
      const __m256i b1 = _mm256_loadu_si256((const __m256i*)(const void*)(wp + 8));
      __m256i x = broadcast_pair(a0 + 2 * (size_t)p);
      MADD8(c00, x, b0);
      MADD8(c01, x, b1);
      x = broadcast_pair(a1 + 2 * (size_t)p);
      MADD8(c10, x, b0);
      MADD8(c11, x, b1);
      x = broadcast_pair(a2 + 2 * (size_t)p);
      MADD8(c20, x, b0);
      MADD8(c21, x, b1);
      x = broadcast_pair(a3 + 2 * (size_t)p);
      MADD8(c30, x, b0);
      MADD8(c31, x, b1);
    }
  }
  store16_s8(c00, c01, bias, multiplier, shift, q, out, live);
  store16_s8(c10, c11, bias, multiplier, shift, q, out + ldo, live);
  store16_s8(c20, c21, bias, multiplier, shift, q, out + 2 * (size_t)ldo, live);
  store16_s8(c30, c31, bias, multiplier, shift, q, out + 3 * (size_t)ldo, live);
}

/* tile4_s8 for a single row (row[0]; rows past a multiple of 4): the pairs
 * split over two accumulator sets, so two multiply-add chains overlap
 * (integer sums: any order gives the same). */
AVX2_INLINE void row1_s8(const rows_t* a, const int32_t* w, int32_t ldw, const int32_t* bias,
                         const int32_t* multiplier, const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out,
                         size_t live) {
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00;
  const int32_t* wp = w;
  for (int32_t s = 0; s < a->segments; s++) {
    const int16_t* row = a->row[0] + (size_t)s * a->seg_stride;
    int32_t p = 0;
    for (; p + 2 <= a->seg_pairs; p += 2, wp += 2 * (size_t)ldw) {
      __m256i x = broadcast_pair(row + 2 * (size_t)p);
      MADD8(c00, x, _mm256_loadu_si256((const __m256i*)(const void*)wp));
      MADD8(c01, x, _mm256_loadu_si256((const __m256i*)(const void*)(wp + 8)));
      x = broadcast_pair(row + 2 * (size_t)p + 2);
      MADD8(c10, x, _mm256_loadu_si256((const __m256i*)(const void*)(wp + ldw)));
      MADD8(c11, x, _mm256_loadu_si256((const __m256i*)(const void*)(wp + ldw + 8)));
    }
    if (p < a->seg_pairs) {
      const __m256i x = broadcast_pair(row + 2 * (size_t)p);
      MADD8(c00, x, _mm256_loadu_si256((const __m256i*)(const void*)wp));
      MADD8(c01, x, _mm256_loadu_si256((const __m256i*)(const void*)(wp + 8)));
      wp += ldw;
    }
  }
  store16_s8(_mm256_add_epi32(c00, c10), _mm256_add_epi32(c01, c11), bias, multiplier, shift, q, out, live);
}

/* The rows of a (4 of them, or 1 in row[0]) times every 16-column block of
 * the weights, requantized and stored as int8 (row r at out + r * ldo). */
AVX2_INLINE void row_block_s8(const rows_t* a, int rows, const int32_t* w, int32_t ldw, int32_t n,
                              const int32_t* bias, const int32_t* multiplier, const int32_t* shift,
                              const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo) {
  for (int32_t j = 0; j < n; j += 16) {
    const size_t live = (size_t)tvmd_cmsis_min(16, n - j);
    const int32_t* b = bias ? bias + j : NULL;
    if (rows == 4) {
      tile4_s8(a, w + j, ldw, b, multiplier + j, shift + j, q, out + j, ldo, live);
    } else {
      row1_s8(a, w + j, ldw, b, multiplier + j, shift + j, q, out + j, live);
    }
  }
}

AVX2 void tvmd_cmsis_gemm_s8_avx2(const int16_t* a, int32_t lda, int32_t m, int32_t k_pairs, const int16_t* w,
                                  int32_t ldw, int32_t n, const int32_t* bias, const int32_t* multiplier,
                                  const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo) {
  const int32_t* w32 = (const int32_t*)(const void*)w;
  rows_t rows = {{NULL, NULL, NULL, NULL}, 1, k_pairs, 0};
  for (int32_t r = 0; r < m;) {
    const int count = m - r >= 4 ? 4 : 1;
    for (int k = 0; k < count; k++) rows.row[k] = a + (size_t)(r + k) * (size_t)lda;
    row_block_s8(&rows, count, w32, ldw, n, bias, multiplier, shift, q, out + (size_t)r * (size_t)ldo, ldo);
    r += count;
  }
}

AVX2 void tvmd_cmsis_conv_image_s8_avx2(const tvmd_cmsis_conv_params_t* p, const int16_t* image, int32_t pw,
                                        int32_t out_rows, const int32_t* bias, int8_t* out_image) {
  const size_t ch = (size_t)p->in_ch;
  const int32_t pixels = out_rows * p->out_w;
  const rows_t shape = {{NULL, NULL, NULL, NULL}, p->filter_h, p->filter_w * p->in_ch / 2,
                        (size_t)p->dilation_h * (size_t)pw * ch};
  const int32_t* w32 = (const int32_t*)(const void*)p->weights;
  for (int32_t px = 0; px < pixels;) {
    const int count = pixels - px >= 4 ? 4 : 1;
    rows_t rows = shape;
    for (int k = 0; k < count; k++) {
      const int32_t oy = (px + k) / p->out_w, ox = (px + k) % p->out_w;
      rows.row[k] = image + ((size_t)(oy * p->stride_h) * (size_t)pw + (size_t)(ox * p->stride_w)) * ch;
    }
    row_block_s8(&rows, count, w32, p->ldw, p->out_ch, bias, p->multiplier, p->shift, &p->q,
                 out_image + (size_t)px * (size_t)p->out_ch, p->out_ch);
    px += count;
  }
}

/* The batch-1 GEMV (gemv.c) on panels of up to 8 blocks of 8 columns: a
 * step broadcasts 4 input values x to every int32 lane and, per block, reads
 * the next 4 weights w of its 8 columns (32 bytes).  vpmaddubsw multiplies
 * unsigned by signed bytes, so it gets |x| and w with x's sign (vpsignb):
 * |x| * (sign(x) * w) = x * w, exact because no weight is -128 (the packing
 * checks), and each pair sum, at most 2 * 128 * 127 in magnitude, fits
 * int16 without saturating; vpmaddwd by 1 adds the pairs into the column's
 * int32 lane.  32 multiply-adds per 4 instructions on the raw int8 bytes.
 * The layout constants are the packing's (kernel_table.py). */
typedef char tvmd_cmsis_gemv_layout_check[(TVMD_CMSIS_GEMV_COLS == 8 && TVMD_CMSIS_GEMV_DEPTH == 4 &&
                                           TVMD_CMSIS_GEMV_PANEL == 64) ? 1 : -1];

#define GEMV_BLOCK(c, b)                                                                                  \
  if (blocks > (b)) {                                                                                     \
    const __m256i wb = _mm256_loadu_si256((const __m256i*)(const void*)(wq + 32 * (b)));                  \
    const __m256i pairs = _mm256_maddubs_epi16(ax, _mm256_sign_epi8(wb, xb));                             \
    (c) = _mm256_add_epi32((c), _mm256_madd_epi16(pairs, ones));                                          \
  }
#define GEMV_STEP(quad)                                                                                   \
  do {                                                                                                    \
    const __m256i xb = _mm256_set1_epi32(quad), ax = _mm256_abs_epi8(xb);                                 \
    GEMV_BLOCK(c0, 0) GEMV_BLOCK(c1, 1) GEMV_BLOCK(c2, 2) GEMV_BLOCK(c3, 3)                               \
    GEMV_BLOCK(c4, 4) GEMV_BLOCK(c5, 5) GEMV_BLOCK(c6, 6) GEMV_BLOCK(c7, 7)                               \
  } while (0)

/* The sums of one panel of `blocks` 8-column blocks (a constant in each
 * instance below: the unused blocks compile away), offset_sums (padded to
 * the blocks) added, stored to sums[0, 8 * blocks). */
AVX2_INLINE void gemv_panel(const int8_t* x, int32_t depth, const int8_t* w, int blocks, const int32_t* offset_sums,
                            int32_t* sums) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  const size_t step = 32 * (size_t)blocks; /* weight bytes per quad */
  const int32_t full = depth / 4;
  const int8_t* wq = w;
  for (int32_t kq = 0; kq < full; kq++, wq += step) {
    int32_t quad;
    memcpy(&quad, x + 4 * (size_t)kq, sizeof(quad));
    GEMV_STEP(quad);
  }
  if (depth % 4) { /* the last 1..3 values; their partners' weights are 0 */
    int8_t tail[4] = {0, 0, 0, 0};
    memcpy(tail, x + 4 * (size_t)full, (size_t)(depth % 4));
    int32_t quad;
    memcpy(&quad, tail, sizeof(quad));
    GEMV_STEP(quad);
  }
#define GEMV_SUMS(c, b)                                                                                   \
  if (blocks > (b)) {                                                                                     \
    const __m256i s = _mm256_loadu_si256((const __m256i*)(const void*)(offset_sums + 8 * (b)));           \
    _mm256_storeu_si256((__m256i*)(void*)(sums + 8 * (b)), _mm256_add_epi32((c), s));                     \
  }
  GEMV_SUMS(c0, 0) GEMV_SUMS(c1, 1) GEMV_SUMS(c2, 2) GEMV_SUMS(c3, 3)
  GEMV_SUMS(c4, 4) GEMV_SUMS(c5, 5) GEMV_SUMS(c6, 6) GEMV_SUMS(c7, 7)
#undef GEMV_SUMS
}

/* One function per panel width, each compiled alone: inlined beside the
 * requantization, the register allocator spilled more accumulators to the
 * stack inside the loop (measured ~5% slower). */
typedef void (*gemv_panel_fn)(const int8_t* x, int32_t depth, const int8_t* w, const int32_t* offset_sums,
                              int32_t* sums);
#define GEMV_PANEL_FN(n)                                                                                  \
  static __attribute__((noinline, target("avx2"))) void gemv_panel##n(                                    \
      const int8_t* x, int32_t depth, const int8_t* w, const int32_t* offset_sums, int32_t* sums) {       \
    gemv_panel(x, depth, w, n, offset_sums, sums);                                                        \
  }
GEMV_PANEL_FN(1)
GEMV_PANEL_FN(2)
GEMV_PANEL_FN(3)
GEMV_PANEL_FN(4)
GEMV_PANEL_FN(5)
GEMV_PANEL_FN(6)
GEMV_PANEL_FN(7)
GEMV_PANEL_FN(8)
#undef GEMV_PANEL_FN

AVX2 void tvmd_cmsis_gemv_s8_avx2(const int8_t* x, int32_t depth, const int8_t* w, int32_t n,
                                  const int32_t* offset_sums, const int32_t* bias, const int32_t* multiplier,
                                  const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out) {
  static const gemv_panel_fn panel_fns[8] = {gemv_panel1, gemv_panel2, gemv_panel3, gemv_panel4,
                                             gemv_panel5, gemv_panel6, gemv_panel7, gemv_panel8};
  const int32_t quads = (depth + 3) / 4, cols = (n + 7) / 8 * 8;
  int32_t sums[64];
  for (int32_t j0 = 0; j0 < cols; j0 += 64) {
    panel_fns[tvmd_cmsis_min(64, cols - j0) / 8 - 1](x, depth, w + (size_t)j0 * (size_t)quads * 4, offset_sums + j0,
                                                      sums);
    tvmd_cmsis_requantize_avx2(sums, bias ? bias + j0 : NULL, multiplier + j0, shift + j0,
                               tvmd_cmsis_min(64, n - j0), q, out + j0);
  }
}

#endif /* TVMD_CMSIS_X86 */
