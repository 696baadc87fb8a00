/*
 * x86-64 int8 VNNI GEMM of CONV_2D and FULLY_CONNECTED (batch > 1): one
 * vpdpbusd multiplies four unsigned input bytes, broadcast, with four int8
 * weights of each of 16 (AVX-512 VNNI) or 8 (AVX-VNNI) columns and adds the
 * four products to the column's int32 sum, no widening and no separate add.
 * The sums are then requantized in registers and written as int8 (the
 * helpers of simd_x86_requantize.h, the math every x86 path shares).
 *
 * Operands (gemm_vnni.c prepares them): rows of u = x + 128 (x ^ 0x80, the
 * unsigned form vpdpbusd takes; or int8 x flipped as broadcast), read as
 * tvmd_cmsis_vnni_rows_t says (im2col rows, or a convolution's filter rows in
 * place in its bordered image, one segment of quads per filter row); weights
 * quad-interleaved at prepare time, w[(q * ldw + j) * 4 + t] = W[4q + t][j],
 * zero padded (ops/_common.py: vnni_plan); per column a correction,
 * (input_offset - 128) x the column's weight sum, where the sums start.
 * Then correction + sum u * w = sum (x + input_offset) * w: the reference's
 * sum.  check_accumulator bounds 255 * sum |w| by INT32_MAX, and |u| <= 255,
 * |input_offset - 128| <= 255, so neither the correction nor any partial sum
 * overflows (vpdpbusd wraps; it never has to).
 */
#include "internal.h"

#if TVMD_CMSIS_X86

#include <string.h>

#include "simd_x86_requantize.h"

#define VNNI512 TVMD_X86_TARGET("avx512f,avx512bw,avx512vl,avx512vnni")
#define VNNI512_INLINE static inline __attribute__((always_inline)) TVMD_X86_TARGET("avx512f,avx512bw,avx512vl,avx512vnni")
#define AVXVNNI TVMD_X86_TARGET("avx2,avxvnni")
#define AVXVNNI_INLINE static inline __attribute__((always_inline)) TVMD_X86_TARGET("avx2,avxvnni")

/* Four input bytes of a row, as one int32 (to broadcast); flipped (x ^ 0x80
 * per byte) when the row holds int8 x.  flip is a constant at every call
 * site. */
static inline int32_t quad(const uint8_t* a, int flip) {
  int32_t v;
  memcpy(&v, a, sizeof(v));
  return flip ? (int32_t)((uint32_t)v ^ 0x80808080u) : v;
}

/* --------------------------------------------------------- AVX-512 VNNI */

/* 16 sums (bias already added) to int8 with the column parameters and the
 * output's offset and clamp in registers, the live lanes stored.  A tile
 * loads them once for all its rows (read from memory per row, as
 * store16_s8_avx512 does, the compiler reloads them after every int8 store,
 * which may alias them).  The clamp is the saturating narrowing to
 * [-128, 127], then the activation's bounds (an int8 range: the same clamp)
 * on the 16 bytes: cheaper than a 512-bit min and max. */
VNNI512_INLINE void finish16(__m512i x, __m512i multiplier, __m512i shift, __m512i offset, __m128i act_min,
                             __m128i act_max, int8_t* out, __mmask16 live) {
  const __m512i y = _mm512_add_epi32(requantize16(x, multiplier, shift), offset);
  const __m128i b = _mm_min_epi8(_mm_max_epi8(_mm512_cvtsepi32_epi8(y), act_min), act_max);
  if (live == (__mmask16)0xFFFF) {
    _mm_storeu_si128((__m128i*)(void*)out, b);
  } else { /* a column tail: live is the first n lanes */
    int8_t bytes[16];
    _mm_storeu_si128((__m128i*)(void*)bytes, b);
    memcpy(out, bytes, (size_t)__builtin_popcount((unsigned)live));
  }
}

/* rows x (16 * nv) outputs of rows a0, a0 + row_stride, ... from column j0
 * of the block: sums started at the corrections, every quad of every
 * segment, then requantized and the first live columns of each row stored.
 * rows, nv and flip are constants at every call site, so the accumulators
 * (rows x nv <= 24) unroll into registers.  Tall tiles for few columns:
 * vpdpbusd's latency needs a dozen or more independent sums in flight, which
 * 4 rows of one 16-column vector (a 16-channel convolution's) do not give. */
VNNI512_INLINE void tile512(const tvmd_cmsis_vnni_rows_t* a, const uint8_t* a0, int rows, int nv, int flip,
                            const int8_t* w, int32_t ldw, const int32_t* corr, const int32_t* bias,
                            const int32_t* multiplier, const int32_t* shift, const tvmd_cmsis_quant_t* q,
                            int8_t* out, int32_t ldo, int32_t live) {
  /* The sums start at correction + bias (the bias's wrapping int32 addition
   * done first: the same sum modulo 2^32, as vpdpbusd wraps too). */
  __m512i c[16][4];
  for (int v = 0; v < nv; v++) {
    __m512i start = _mm512_loadu_si512((const void*)(corr + 16 * v));
    if (bias != NULL) {
      start = _mm512_add_epi32(start, _mm512_maskz_loadu_epi32(tvmd_cmsis_live16(live - 16 * v), bias + 16 * v));
    }
    for (int r = 0; r < rows; r++) c[r][v] = start;
  }
  /* Row r's bytes at base[r / 4] + {0, rs, 2 rs, 3 rs}[r % 4]: four base
   * pointers and two strides, each load one addressing mode, so no row
   * needs a register of its own (with one per row GCC ran out of them). */
  const size_t rs = a->row_stride, rs3 = 3 * a->row_stride;
  const __m512i flip_bits = _mm512_set1_epi32((int)0x80808080u);
  const int8_t* ws = w;
  for (int32_t g = 0; g < a->segments; g++) {
    const uint8_t* base[4];
    for (int i = 0; i < 4; i++) base[i] = a0 + (size_t)g * a->seg_stride + (size_t)(4 * i) * rs;
    for (int32_t t = 0; t < a->seg_quads; t++, ws += (size_t)ldw * 4) {
      __m512i b[4];
      for (int v = 0; v < nv; v++) b[v] = _mm512_loadu_si512((const void*)(ws + 64 * v));
      for (int r = 0; r < rows; r++) {
        const uint8_t* row = base[r >> 2];
        row = (r & 3) == 0 ? row : (r & 3) == 1 ? row + rs : (r & 3) == 2 ? row + 2 * rs : row + rs3;
        __m512i x = _mm512_set1_epi32(quad(row, 0));
        if (flip) x = _mm512_xor_si512(x, flip_bits);
        for (int v = 0; v < nv; v++) c[r][v] = _mm512_dpbusd_epi32(c[r][v], x, b[v]);
      }
      for (int i = 0; i < 4; i++) base[i] += 4;
    }
  }
  const __m512i offset = _mm512_set1_epi32(q->output_offset);
  const __m128i act_min = _mm_set1_epi8((char)q->act_min), act_max = _mm_set1_epi8((char)q->act_max);
  for (int v = 0; v < nv && 16 * v < live; v++) {
    const __mmask16 mask = tvmd_cmsis_live16(live - 16 * v);
    const int32_t j = 16 * v;
    const __m512i mult_v = _mm512_maskz_loadu_epi32(mask, multiplier + j);
    const __m512i shift_v = _mm512_maskz_loadu_epi32(mask, shift + j);
    for (int r = 0; r < rows; r++) {
      finish16(c[r][v], mult_v, shift_v, offset, act_min, act_max, out + (size_t)r * (size_t)ldo + j, mask);
    }
  }
}

/* Every row of a times nv vectors of columns from column j (live of them
 * real): tiles of tall rows, then one of mid rows (when mid > 4), then of 4,
 * then single rows (each of those a chain of vpdpbusd waiting on the last:
 * few; an output row of 28 pixels is 16 + 8 + 4, not 16 + 4 + 4 + 4). */
VNNI512_INLINE void columns512(const tvmd_cmsis_vnni_rows_t* a, int32_t m, int nv, int tall, int mid, int flip,
                               const int8_t* w, int32_t ldw, const int32_t* corr, const int32_t* bias,
                               const int32_t* multiplier, const int32_t* shift, const tvmd_cmsis_quant_t* q,
                               int8_t* out, int32_t ldo, int32_t live) {
  int32_t r = 0;
  for (; r + tall <= m; r += tall) {
    tile512(a, a->base + (size_t)r * a->row_stride, tall, nv, flip, w, ldw, corr, bias, multiplier, shift, q,
            out + (size_t)r * (size_t)ldo, ldo, live);
  }
  if (mid > 4 && r + mid <= m) {
    tile512(a, a->base + (size_t)r * a->row_stride, mid, nv, flip, w, ldw, corr, bias, multiplier, shift, q,
            out + (size_t)r * (size_t)ldo, ldo, live);
    r += mid;
  }
  if (tall > 4) {
    for (; r + 4 <= m; r += 4) {
      tile512(a, a->base + (size_t)r * a->row_stride, 4, nv, flip, w, ldw, corr, bias, multiplier, shift, q,
              out + (size_t)r * (size_t)ldo, ldo, live);
    }
  }
  for (; r < m; r++) {
    tile512(a, a->base + (size_t)r * a->row_stride, 1, nv, flip, w, ldw, corr, bias, multiplier, shift, q,
            out + (size_t)r * (size_t)ldo, ldo, live);
  }
}

VNNI512_INLINE void gemm512(const tvmd_cmsis_vnni_rows_t* a, int32_t m, int flip, const int8_t* w, int32_t ldw,
                            int32_t n, const int32_t* corr, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo) {
  const int32_t n16 = (n + 15) & ~15; /* <= ldw: every load stays in the packed columns */
  int32_t j = 0;
  /* Column blocks of 4 vectors (6 rows x 4 sums), and the last 1..3 vectors
   * as one block of 16 x 1, 12 x 2 or 8 x 3 sums. */
  for (; j + 64 <= n16; j += 64) {
    columns512(a, m, 4, 6, 0, flip, w + 4 * (size_t)j, ldw, corr + j, bias ? bias + j : NULL, multiplier + j,
               shift + j, q, out + j, ldo, n - j);
  }
  const int left = (int)((n16 - j) / 16);
  const int32_t* b = bias ? bias + j : NULL;
  if (left == 3) {
    columns512(a, m, 3, 8, 0, flip, w + 4 * (size_t)j, ldw, corr + j, b, multiplier + j, shift + j, q, out + j, ldo,
               n - j);
  } else if (left == 2) {
    columns512(a, m, 2, 12, 8, flip, w + 4 * (size_t)j, ldw, corr + j, b, multiplier + j, shift + j, q, out + j, ldo,
               n - j);
  } else if (left == 1) {
    columns512(a, m, 1, 16, 8, flip, w + 4 * (size_t)j, ldw, corr + j, b, multiplier + j, shift + j, q, out + j, ldo,
               n - j);
  }
}

VNNI512 void tvmd_cmsis_gemm_vnni_avx512(const tvmd_cmsis_vnni_rows_t* a, int32_t m, const int8_t* w, int32_t ldw,
                                         int32_t n, const int32_t* corr, const int32_t* bias,
                                         const int32_t* multiplier, const int32_t* shift,
                                         const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo) {
  if (a->flip) {
    gemm512(a, m, 1, w, ldw, n, corr, bias, multiplier, shift, q, out, ldo);
  } else {
    gemm512(a, m, 0, w, ldw, n, corr, bias, multiplier, shift, q, out, ldo);
  }
}

/* ------------------------------------------------------------- AVX-VNNI */

#define DPBUSD8(c, x, b) ((c) = _mm256_dpbusd_avx_epi32((c), (x), (b)))

AVXVNNI_INLINE __m256i load8(const void* p) { return _mm256_loadu_si256((const __m256i*)p); }

/* A 4-row tile of 16 columns (two vectors of 8), its sums requantized in
 * registers and the first live columns of each row written; named
 * accumulators, as simd_x86.c's tile4_s8, so all eight stay in registers. */
AVXVNNI_INLINE void tile4_vnni(const tvmd_cmsis_vnni_rows_t* a, const uint8_t* a0, int flip, const int8_t* w,
                               int32_t ldw, const int32_t* corr, const int32_t* bias, const int32_t* multiplier,
                               const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo,
                               size_t live) {
  __m256i c00 = load8(corr), c01 = load8(corr + 8);
  __m256i c10 = c00, c11 = c01, c20 = c00, c21 = c01, c30 = c00, c31 = c01;
  const size_t rs = a->row_stride;
  const int8_t* ws = w;
  for (int32_t g = 0; g < a->segments; g++) {
    const uint8_t* s0 = a0 + (size_t)g * a->seg_stride;
    for (int32_t t = 0; t < a->seg_quads; t++, ws += (size_t)ldw * 4) {
      const __m256i b0 = load8(ws), b1 = load8(ws + 32);
      const uint8_t* at = s0 + 4 * (size_t)t;
      __m256i x = _mm256_set1_epi32(quad(at, flip));
      DPBUSD8(c00, x, b0);
      DPBUSD8(c01, x, b1);
      x = _mm256_set1_epi32(quad(at + rs, flip));
      DPBUSD8(c10, x, b0);
      DPBUSD8(c11, x, b1);
      x = _mm256_set1_epi32(quad(at + 2 * rs, flip));
      DPBUSD8(c20, x, b0);
      DPBUSD8(c21, x, b1);
      x = _mm256_set1_epi32(quad(at + 3 * rs, flip));
      DPBUSD8(c30, x, b0);
      DPBUSD8(c31, x, b1);
    }
  }
  store16_s8(c00, c01, bias, multiplier, shift, q, out, live);
  store16_s8(c10, c11, bias, multiplier, shift, q, out + ldo, live);
  store16_s8(c20, c21, bias, multiplier, shift, q, out + 2 * (size_t)ldo, live);
  store16_s8(c30, c31, bias, multiplier, shift, q, out + 3 * (size_t)ldo, live);
}

/* tile4_vnni for one row: alternate quads go to two accumulator sets, so two
 * dependency chains overlap (integer sums: any order gives the same). */
AVXVNNI_INLINE void row1_vnni(const tvmd_cmsis_vnni_rows_t* a, const uint8_t* a0, int flip, const int8_t* w,
                              int32_t ldw, const int32_t* corr, const int32_t* bias, const int32_t* multiplier,
                              const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, size_t live) {
  __m256i c00 = load8(corr), c01 = load8(corr + 8);
  __m256i c10 = _mm256_setzero_si256(), c11 = c10;
  const int8_t* ws = w;
  for (int32_t g = 0; g < a->segments; g++) {
    const uint8_t* s0 = a0 + (size_t)g * a->seg_stride;
    int32_t t = 0;
    for (; t + 2 <= a->seg_quads; t += 2, ws += (size_t)ldw * 8) {
      __m256i x = _mm256_set1_epi32(quad(s0 + 4 * (size_t)t, flip));
      DPBUSD8(c00, x, load8(ws));
      DPBUSD8(c01, x, load8(ws + 32));
      x = _mm256_set1_epi32(quad(s0 + 4 * (size_t)t + 4, flip));
      DPBUSD8(c10, x, load8(ws + 4 * (size_t)ldw));
      DPBUSD8(c11, x, load8(ws + 4 * (size_t)ldw + 32));
    }
    if (t < a->seg_quads) {
      const __m256i x = _mm256_set1_epi32(quad(s0 + 4 * (size_t)t, flip));
      DPBUSD8(c00, x, load8(ws));
      DPBUSD8(c01, x, load8(ws + 32));
      ws += (size_t)ldw * 4;
    }
  }
  store16_s8(_mm256_add_epi32(c00, c10), _mm256_add_epi32(c01, c11), bias, multiplier, shift, q, out, live);
}

AVXVNNI_INLINE void gemm256(const tvmd_cmsis_vnni_rows_t* a, int32_t m, int flip, const int8_t* w, int32_t ldw,
                            int32_t n, const int32_t* corr, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo) {
  for (int32_t r = 0; r < m;) {
    const int rows = m - r >= 4 ? 4 : 1;
    const uint8_t* ar = a->base + (size_t)r * a->row_stride;
    int8_t* o = out + (size_t)r * (size_t)ldo;
    for (int32_t j = 0; j < n; j += 16) {
      const size_t live = (size_t)tvmd_cmsis_min(16, n - j);
      const int32_t* b = bias ? bias + j : NULL;
      if (rows == 4) {
        tile4_vnni(a, ar, flip, w + 4 * (size_t)j, ldw, corr + j, b, multiplier + j, shift + j, q, o + j, ldo,
                   live);
      } else {
        row1_vnni(a, ar, flip, w + 4 * (size_t)j, ldw, corr + j, b, multiplier + j, shift + j, q, o + j, live);
      }
    }
    r += rows;
  }
}

AVXVNNI void tvmd_cmsis_gemm_vnni_avx2(const tvmd_cmsis_vnni_rows_t* a, int32_t m, const int8_t* w, int32_t ldw,
                                       int32_t n, const int32_t* corr, const int32_t* bias,
                                       const int32_t* multiplier, const int32_t* shift,
                                       const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo) {
  if (a->flip) {
    gemm256(a, m, 1, w, ldw, n, corr, bias, multiplier, shift, q, out, ldo);
  } else {
    gemm256(a, m, 0, w, ldw, n, corr, bias, multiplier, shift, q, out, ldo);
  }
}

#endif /* TVMD_CMSIS_X86 */
