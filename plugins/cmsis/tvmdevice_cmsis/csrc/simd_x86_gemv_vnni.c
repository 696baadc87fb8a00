/*
 * The batch-1 GEMV (gemv.c) on AVX-512 VNNI and AVX-VNNI: the int8 weight
 * panels of the AVX2 path ([quads][columns][4], up to 64 columns a panel),
 * each step one vpdpbusd per 16 (AVX-512) or 8 (AVX-VNNI) columns against
 * 4 input bytes broadcast: 64 (32) multiply-adds in one instruction, where
 * the AVX2 path needs vpsignb, vpmaddubsw, vpmaddwd and vpaddd for 32.
 *
 * vpdpbusd multiplies unsigned by signed bytes, so the input is taken as
 * u = x + 128 (x ^ 0x80) and each column's sum starts at vnni_correction,
 * (input_offset - 128) x the column's weight sum, packed at prepare time:
 * correction + sum u * w = sum (x + input_offset) * w, the reference's sum
 * (as simd_x86_vnni.c's GEMM; check_accumulator bounds every partial sum).
 * Depth past the weights (to a multiple of 4) has weight 0 and reads a
 * zero-padded copy of the input's last bytes: nothing is read past x.
 * Consecutive steps add into separate accumulators, so several chains of
 * vpdpbusd overlap (integer sums: any order gives the same).  The sums are
 * requantized in registers (simd_x86_requantize.h) and stored as int8.
 */
#include "internal.h"

#if TVMD_CMSIS_X86

#include <string.h>

#include "simd_x86_requantize.h"

#define VNNI512_INLINE \
  static inline __attribute__((always_inline)) TVMD_X86_TARGET("avx512f,avx512bw,avx512vl,avx512vnni")
#define VNNI512 TVMD_X86_TARGET("avx512f,avx512bw,avx512vl,avx512vnni")
#define AVXVNNI_INLINE static inline __attribute__((always_inline)) TVMD_X86_TARGET("avx2,avxvnni")
#define AVXVNNI TVMD_X86_TARGET("avx2,avxvnni")

typedef char tvmd_cmsis_gemv_vnni_layout_check[(TVMD_CMSIS_GEMV_COLS == 8 && TVMD_CMSIS_GEMV_DEPTH == 4 &&
                                                TVMD_CMSIS_GEMV_PANEL == 64) ? 1 : -1];

/* Input bytes 4kq..4kq + 3 as u = x + 128 in one int32 (the last, partial
 * quad through a zero-padded copy). */
static inline int32_t u_quad(const int8_t* x, int32_t depth, int32_t kq) {
  int32_t v = 0;
  const int32_t at = 4 * kq;
  memcpy(&v, x + at, (size_t)tvmd_cmsis_min(4, depth - at));
  return (int32_t)((uint32_t)v ^ 0x80808080u);
}

/* --------------------------------------------------------- AVX-512 VNNI */

/* One panel of `width` columns (a multiple of 8, a constant at each call):
 * nv vectors of 16 columns and, when width is an odd multiple of 8, one of
 * 8 columns in a 256-bit register (AVX-512 VL: a half-empty 512-bit one
 * costs as much as a full one on CPUs that split it in two halves).  SETS
 * consecutive steps add into separate accumulators: a narrow panel (micro
 * speech's 4 columns over 4,000 values) would otherwise wait on one
 * vpdpbusd's latency every step.  Requantized into out[0, live). */
#define SETS 4
VNNI512_INLINE void panel512(const int8_t* x, int32_t depth, const int8_t* w, int width, const int32_t* corr,
                             const int32_t* bias, const int32_t* multiplier, const int32_t* shift,
                             const tvmd_cmsis_quant_t* q, int8_t* out, int32_t live) {
  const int nv = width / 16, half = width % 16 != 0;
  const int sets = nv <= 2 ? SETS : 2; /* independent chains: at least 4 (registers: nv x sets <= 8) */
  __m512i c[SETS][4];
  __m256i h[SETS];
  for (int s = 0; s < sets; s++) {
    for (int v = 0; v < nv; v++) {
      c[s][v] = s ? _mm512_setzero_si512() : _mm512_loadu_si512((const void*)(corr + 16 * v));
    }
    h[s] = s || !half ? _mm256_setzero_si256() : _mm256_loadu_si256((const __m256i*)(const void*)(corr + 16 * nv));
  }
  const int32_t quads = (depth + 3) / 4, full = depth / 4, blocks_end = full - full % sets;
  const size_t step = 4 * (size_t)width; /* weight bytes per quad */
  const int8_t* wq = w;
  const __m512i flip = _mm512_set1_epi32((int32_t)0x80808080u);
  int32_t kq = 0;
  for (; kq < blocks_end; kq += sets, wq += (size_t)sets * step) {
    for (int s = 0; s < sets; s++) {
      int32_t xs;
      memcpy(&xs, x + 4 * (size_t)(kq + s), sizeof(xs));
      const __m512i u = _mm512_xor_si512(_mm512_set1_epi32(xs), flip);
      const int8_t* ws = wq + (size_t)s * step;
      for (int v = 0; v < nv; v++) {
        c[s][v] = _mm512_dpbusd_epi32(c[s][v], u, _mm512_loadu_si512((const void*)(ws + 64 * v)));
      }
      if (half) {
        h[s] = _mm256_dpbusd_epi32(h[s], _mm512_castsi512_si256(u),
                                   _mm256_loadu_si256((const __m256i*)(const void*)(ws + 64 * nv)));
      }
    }
  }
  for (; kq < quads; kq++, wq += step) { /* the last full quads, then the partial one */
    const __m512i u = _mm512_set1_epi32(u_quad(x, depth, kq));
    for (int v = 0; v < nv; v++) {
      c[0][v] = _mm512_dpbusd_epi32(c[0][v], u, _mm512_loadu_si512((const void*)(wq + 64 * v)));
    }
    if (half) {
      h[0] = _mm256_dpbusd_epi32(h[0], _mm512_castsi512_si256(u),
                                 _mm256_loadu_si256((const __m256i*)(const void*)(wq + 64 * nv)));
    }
  }
  for (int s = 1; s < sets; s++) {
    for (int v = 0; v < nv; v++) c[0][v] = _mm512_add_epi32(c[0][v], c[s][v]);
    h[0] = _mm256_add_epi32(h[0], h[s]);
  }
  for (int v = 0; v < nv && 16 * v < live; v++) {
    store16_s8_avx512(c[0][v], bias ? bias + 16 * v : NULL, multiplier + 16 * v, shift + 16 * v, q, out + 16 * v,
                      tvmd_cmsis_live16(live - 16 * v));
  }
  if (half && 16 * nv < live) {
    const int32_t at = 16 * nv; /* live - at <= 8: the upper lanes are never stored */
    store16_s8_avx512(_mm512_castsi256_si512(h[0]), bias ? bias + at : NULL, multiplier + at, shift + at, q, out + at,
                      tvmd_cmsis_live16(live - at));
  }
}
#undef SETS

VNNI512 void tvmd_cmsis_gemv_vnni_avx512(const int8_t* x, int32_t depth, const int8_t* w, int32_t n,
                                         const int32_t* corr, const int32_t* bias, const int32_t* multiplier,
                                         const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out) {
  const int32_t quads = (depth + 3) / 4, cols = (n + 7) / 8 * 8;
  for (int32_t j0 = 0; j0 < cols; j0 += 64) {
    const int8_t* panel = w + (size_t)j0 * (size_t)quads * 4;
    const int32_t* b = bias ? bias + j0 : NULL;
    const int32_t live = tvmd_cmsis_min(64, n - j0);
    switch (tvmd_cmsis_min(64, cols - j0) / 8) {
#define PANEL512(blocks)                                                                                      \
  case blocks:                                                                                                \
    panel512(x, depth, panel, 8 * (blocks), corr + j0, b, multiplier + j0, shift + j0, q, out + j0, live);   \
    break;
      PANEL512(1) PANEL512(2) PANEL512(3) PANEL512(4) PANEL512(5) PANEL512(6) PANEL512(7) PANEL512(8)
#undef PANEL512
      default:
        break;
    }
  }
}

/* -------------------------------------------------------------- AVX-VNNI */

/* As panel512 with 8 columns a vector (nv = width / 8 of them). */
AVXVNNI_INLINE void panel256(const int8_t* x, int32_t depth, const int8_t* w, int width, const int32_t* corr,
                             const int32_t* bias, const int32_t* multiplier, const int32_t* shift,
                             const tvmd_cmsis_quant_t* q, int8_t* out, int32_t live) {
  const int nv = width / 8;
  __m256i c[8];
  for (int v = 0; v < nv; v++) c[v] = _mm256_loadu_si256((const __m256i*)(const void*)(corr + 8 * v));
  const int32_t quads = (depth + 3) / 4;
  const size_t step = 4 * (size_t)width;
  const int8_t* wq = w;
  for (int32_t kq = 0; kq < quads; kq++, wq += step) {
    const __m256i u = _mm256_set1_epi32(u_quad(x, depth, kq));
    for (int v = 0; v < nv; v++) {
      c[v] = _mm256_dpbusd_avx_epi32(c[v], u, _mm256_loadu_si256((const __m256i*)(const void*)(wq + 32 * v)));
    }
  }
  for (int v = 0; v < nv && 8 * v < live; v += 2) {
    const __m256i hi = v + 1 < nv ? c[v + 1] : _mm256_setzero_si256();
    store16_s8(c[v], hi, bias ? bias + 8 * v : NULL, multiplier + 8 * v, shift + 8 * v, q, out + 8 * v,
               (size_t)tvmd_cmsis_min(16, live - 8 * v));
  }
}

AVXVNNI void tvmd_cmsis_gemv_vnni_avx2(const int8_t* x, int32_t depth, const int8_t* w, int32_t n,
                                       const int32_t* corr, const int32_t* bias, const int32_t* multiplier,
                                       const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out) {
  const int32_t quads = (depth + 3) / 4, cols = (n + 7) / 8 * 8;
  for (int32_t j0 = 0; j0 < cols; j0 += 64) {
    const int8_t* panel = w + (size_t)j0 * (size_t)quads * 4;
    const int32_t* b = bias ? bias + j0 : NULL;
    const int32_t live = tvmd_cmsis_min(64, n - j0);
    switch (tvmd_cmsis_min(64, cols - j0) / 8) {
#define PANEL256(blocks)                                                                                      \
  case blocks:                                                                                                \
    panel256(x, depth, panel, 8 * (blocks), corr + j0, b, multiplier + j0, shift + j0, q, out + j0, live);   \
    break;
      PANEL256(1) PANEL256(2) PANEL256(3) PANEL256(4) PANEL256(5) PANEL256(6) PANEL256(7) PANEL256(8)
#undef PANEL256
      default:
        break;
    }
  }
}

#endif /* TVMD_CMSIS_X86 */
