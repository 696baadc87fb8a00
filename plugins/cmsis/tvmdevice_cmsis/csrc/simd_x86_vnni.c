/*
 * x86-64 int8 VNNI GEMM of CONV_2D and FULLY_CONNECTED (batch > 1): one
 * vpdpbusd multiplies four unsigned input bytes, broadcast, with four int8
 * weights of each of 16 (AVX-512 VNNI) or 8 (AVX-VNNI) columns and adds the
 * four products to the column's int32 sum, no widening and no separate add.
 * The sums are then requantized in registers and written as int8 (the
 * helpers of simd_x86_requantize.h, the math every x86 path shares).
 *
 * Operands (gemm_vnni.c prepares them): rows of u = x + 128 (x ^ 0x80, the
 * unsigned form vpdpbusd takes), lda bytes apart, 4 * k4 values each; weights
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

/* Four input bytes of a row, as one int32 (to broadcast). */
static inline int32_t quad(const uint8_t* a) {
  int32_t v;
  memcpy(&v, a, sizeof(v));
  return v;
}

/* --------------------------------------------------------- AVX-512 VNNI */

/* rows x (16 * nv) outputs from column j0 of the block: sums started at the
 * corrections, k4 steps, then requantized and the first live columns of each
 * row stored.  rows and nv are constants at every call site, so the 4 x 4
 * accumulators unroll into registers. */
VNNI512_INLINE void tile512(const uint8_t* a, int32_t lda, int rows, int nv, int32_t k4, const int8_t* w,
                            int32_t ldw, const int32_t* corr, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo,
                            int32_t live) {
  __m512i c[4][4];
  for (int v = 0; v < nv; v++) {
    const __m512i start = _mm512_loadu_si512((const void*)(corr + 16 * v));
    for (int r = 0; r < rows; r++) c[r][v] = start;
  }
  for (int32_t s = 0; s < k4; s++) {
    const int8_t* ws = w + (size_t)s * (size_t)ldw * 4;
    __m512i b[4];
    for (int v = 0; v < nv; v++) b[v] = _mm512_loadu_si512((const void*)(ws + 64 * v));
    for (int r = 0; r < rows; r++) {
      const __m512i x = _mm512_set1_epi32(quad(a + (size_t)r * (size_t)lda + 4 * (size_t)s));
      for (int v = 0; v < nv; v++) c[r][v] = _mm512_dpbusd_epi32(c[r][v], x, b[v]);
    }
  }
  for (int v = 0; v < nv && 16 * v < live; v++) {
    const __mmask16 mask = tvmd_cmsis_live16(live - 16 * v);
    const int32_t j = 16 * v;
    for (int r = 0; r < rows; r++) {
      store16_s8_avx512(c[r][v], bias ? bias + j : NULL, multiplier + j, shift + j, q,
                        out + (size_t)r * (size_t)ldo + j, mask);
    }
  }
}

VNNI512_INLINE void rows512(const uint8_t* a, int32_t lda, int rows, int32_t k4, const int8_t* w, int32_t ldw,
                            int32_t n, const int32_t* corr, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo) {
  const int32_t n16 = (n + 15) & ~15; /* <= ldw: every load stays in the packed columns */
  int32_t j = 0;
  for (; j + 64 <= n16; j += 64) {
    tile512(a, lda, rows, 4, k4, w + 4 * (size_t)j, ldw, corr + j, bias ? bias + j : NULL, multiplier + j,
            shift + j, q, out + j, ldo, n - j);
  }
  for (; j < n16; j += 16) {
    tile512(a, lda, rows, 1, k4, w + 4 * (size_t)j, ldw, corr + j, bias ? bias + j : NULL, multiplier + j,
            shift + j, q, out + j, ldo, n - j);
  }
}

VNNI512 void tvmd_cmsis_gemm_vnni_avx512(const uint8_t* a, int32_t lda, int32_t m, int32_t k4, const int8_t* w,
                                         int32_t ldw, int32_t n, const int32_t* corr, const int32_t* bias,
                                         const int32_t* multiplier, const int32_t* shift,
                                         const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo) {
  int32_t r = 0;
  for (; r + 4 <= m; r += 4) {
    rows512(a + (size_t)r * (size_t)lda, lda, 4, k4, w, ldw, n, corr, bias, multiplier, shift, q,
            out + (size_t)r * (size_t)ldo, ldo);
  }
  for (; r < m; r++) {
    rows512(a + (size_t)r * (size_t)lda, lda, 1, k4, w, ldw, n, corr, bias, multiplier, shift, q,
            out + (size_t)r * (size_t)ldo, ldo);
  }
}

/* ------------------------------------------------------------- AVX-VNNI */

#define DPBUSD8(c, x, b) ((c) = _mm256_dpbusd_avx_epi32((c), (x), (b)))

AVXVNNI_INLINE __m256i load8(const void* p) { return _mm256_loadu_si256((const __m256i*)p); }

/* A 4-row tile of 16 columns (two vectors of 8), its sums requantized in
 * registers and the first live columns of each row written; named
 * accumulators, as simd_x86.c's tile4_s8, so all eight stay in registers. */
AVXVNNI_INLINE void tile4_vnni(const uint8_t* a, int32_t lda, int32_t k4, const int8_t* w, int32_t ldw,
                               const int32_t* corr, const int32_t* bias, const int32_t* multiplier,
                               const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo,
                               size_t live) {
  __m256i c00 = load8(corr), c01 = load8(corr + 8);
  __m256i c10 = c00, c11 = c01, c20 = c00, c21 = c01, c30 = c00, c31 = c01;
  const uint8_t *a0 = a, *a1 = a + lda, *a2 = a1 + lda, *a3 = a2 + lda;
  for (int32_t s = 0; s < k4; s++) {
    const int8_t* ws = w + (size_t)s * (size_t)ldw * 4;
    const __m256i b0 = load8(ws), b1 = load8(ws + 32);
    const size_t i = 4 * (size_t)s;
    __m256i x = _mm256_set1_epi32(quad(a0 + i));
    DPBUSD8(c00, x, b0);
    DPBUSD8(c01, x, b1);
    x = _mm256_set1_epi32(quad(a1 + i));
    DPBUSD8(c10, x, b0);
    DPBUSD8(c11, x, b1);
    x = _mm256_set1_epi32(quad(a2 + i));
    DPBUSD8(c20, x, b0);
    DPBUSD8(c21, x, b1);
    x = _mm256_set1_epi32(quad(a3 + i));
    DPBUSD8(c30, x, b0);
    DPBUSD8(c31, x, b1);
  }
  store16_s8(c00, c01, bias, multiplier, shift, q, out, live);
  store16_s8(c10, c11, bias, multiplier, shift, q, out + ldo, live);
  store16_s8(c20, c21, bias, multiplier, shift, q, out + 2 * (size_t)ldo, live);
  store16_s8(c30, c31, bias, multiplier, shift, q, out + 3 * (size_t)ldo, live);
}

/* tile4_vnni for one row: the steps split over two accumulator sets, so two
 * dependency chains overlap (integer sums: any order gives the same). */
AVXVNNI_INLINE void row1_vnni(const uint8_t* a, int32_t k4, const int8_t* w, int32_t ldw, const int32_t* corr,
                              const int32_t* bias, const int32_t* multiplier, const int32_t* shift,
                              const tvmd_cmsis_quant_t* q, int8_t* out, size_t live) {
  __m256i c00 = load8(corr), c01 = load8(corr + 8);
  __m256i c10 = _mm256_setzero_si256(), c11 = c10;
  int32_t s = 0;
  for (; s + 2 <= k4; s += 2) {
    const int8_t* ws = w + (size_t)s * (size_t)ldw * 4;
    __m256i x = _mm256_set1_epi32(quad(a + 4 * (size_t)s));
    DPBUSD8(c00, x, load8(ws));
    DPBUSD8(c01, x, load8(ws + 32));
    x = _mm256_set1_epi32(quad(a + 4 * (size_t)s + 4));
    DPBUSD8(c10, x, load8(ws + 4 * (size_t)ldw));
    DPBUSD8(c11, x, load8(ws + 4 * (size_t)ldw + 32));
  }
  if (s < k4) {
    const int8_t* ws = w + (size_t)s * (size_t)ldw * 4;
    const __m256i x = _mm256_set1_epi32(quad(a + 4 * (size_t)s));
    DPBUSD8(c00, x, load8(ws));
    DPBUSD8(c01, x, load8(ws + 32));
  }
  store16_s8(_mm256_add_epi32(c00, c10), _mm256_add_epi32(c01, c11), bias, multiplier, shift, q, out, live);
}

AVXVNNI void tvmd_cmsis_gemm_vnni_avx2(const uint8_t* a, int32_t lda, int32_t m, int32_t k4, const int8_t* w,
                                       int32_t ldw, int32_t n, const int32_t* corr, const int32_t* bias,
                                       const int32_t* multiplier, const int32_t* shift,
                                       const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo) {
  for (int32_t r = 0; r < m;) {
    const int rows = m - r >= 4 ? 4 : 1;
    const uint8_t* ar = a + (size_t)r * (size_t)lda;
    int8_t* o = out + (size_t)r * (size_t)ldo;
    for (int32_t j = 0; j < n; j += 16) {
      const size_t live = (size_t)tvmd_cmsis_min(16, n - j);
      const int32_t* b = bias ? bias + j : NULL;
      if (rows == 4) {
        tile4_vnni(ar, lda, k4, w + 4 * (size_t)j, ldw, corr + j, b, multiplier + j, shift + j, q, o + j, ldo, live);
      } else {
        row1_vnni(ar, k4, w + 4 * (size_t)j, ldw, corr + j, b, multiplier + j, shift + j, q, o + j, live);
      }
    }
    r += rows;
  }
}

#endif /* TVMD_CMSIS_X86 */
