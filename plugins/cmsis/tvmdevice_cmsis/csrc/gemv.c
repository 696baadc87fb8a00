/*
 * Batch-1 FULLY_CONNECTED: one int8 input row times int8 weight panels.
 *
 * The weights (offset added, each in [-127, 127]) were packed at compile
 * time in panels of up to TVMD_CMSIS_GEMV_PANEL columns, each stored as
 * [depth quads][columns][TVMD_CMSIS_GEMV_DEPTH] (ops/_common.py panels_s8):
 * a step reads the next 4 weights of every column of the panel, contiguous,
 * against 4 input values, and every column keeps its own sum (no horizontal
 * additions).  The input is used raw: the input offset's share of each sum,
 * input_offset * sum(w), was computed at compile time (offset_sums).  Both
 * parts are exact in int32 (prepare bounds |x + offset| * sum(|w|)), so the
 * sum is TFLM's sum((x + input_offset) * w) exactly.
 *
 * The portable loop below runs everywhere; on x86-64 with AVX2 the panel
 * kernel of simd_x86.c takes over at run time with identical sums, and on a
 * VNNI level the vpdpbusd one of simd_x86_gemv_vnni.c when prepare packed
 * its corrections.
 */
#include "internal.h"

/* The panels' sums of columns [0, n), offset_sums added.  Written for the
 * vectorizer: per step, pairs[2c + h] += x[2h] * w[c][2h] + x[2h + 1] *
 * w[c][2h + 1] over a contiguous run of the panel's weights, the 4 input
 * values repeated in a small int16 pattern (GCC turns a reduction over the
 * quads' stride into scalar code; this form is ~4x faster). */
#define PATTERN 32 /* int16 input values: 8 columns' quads */
TVMD_CMSIS_SIMD
static void gemv_portable(const int8_t* restrict x, int32_t depth, const int8_t* restrict w, int32_t n,
                          const int32_t* restrict offset_sums, int32_t* restrict acc) {
  const int32_t quads = (depth + TVMD_CMSIS_GEMV_DEPTH - 1) / TVMD_CMSIS_GEMV_DEPTH;
  const int32_t cols = (n + TVMD_CMSIS_GEMV_COLS - 1) / TVMD_CMSIS_GEMV_COLS * TVMD_CMSIS_GEMV_COLS;
  for (int32_t j0 = 0; j0 < cols; j0 += TVMD_CMSIS_GEMV_PANEL) {
    const int32_t width = tvmd_cmsis_min(TVMD_CMSIS_GEMV_PANEL, cols - j0); /* a multiple of 8 */
    const int8_t* restrict panel = w + (size_t)j0 * (size_t)quads * TVMD_CMSIS_GEMV_DEPTH;
    int32_t pairs[TVMD_CMSIS_GEMV_PANEL * 2];
    for (int32_t t = 0; t < 2 * width; t++) pairs[t] = 0;
    for (int32_t kq = 0; kq < quads; kq++) {
      int16_t xr[PATTERN];
      for (int32_t i = 0; i < TVMD_CMSIS_GEMV_DEPTH; i++) {
        const int32_t k = kq * TVMD_CMSIS_GEMV_DEPTH + i;
        const int16_t v = (int16_t)(k < depth ? x[k] : 0); /* past the depth the weights are 0 */
        for (int32_t r = 0; r < PATTERN / TVMD_CMSIS_GEMV_DEPTH; r++) xr[TVMD_CMSIS_GEMV_DEPTH * r + i] = v;
      }
      const int8_t* restrict wq = panel + (size_t)kq * (size_t)width * TVMD_CMSIS_GEMV_DEPTH;
      for (int32_t t0 = 0; t0 < 2 * width; t0 += PATTERN / 2) {
        for (int32_t u = 0; u < PATTERN / 2; u++) {
          pairs[t0 + u] += xr[2 * u] * wq[2 * (t0 + u)] + xr[2 * u + 1] * wq[2 * (t0 + u) + 1];
        }
      }
    }
    const int32_t live = tvmd_cmsis_min(width, n - j0);
    for (int32_t c = 0; c < live; c++) {
      acc[j0 + c] = tvmd_cmsis_wrap_add(pairs[2 * c] + pairs[2 * c + 1], offset_sums[j0 + c]);
    }
  }
}

void tvmd_cmsis_gemv_s8(const int8_t* x, int32_t depth, const int8_t* w, int32_t n, const int32_t* offset_sums,
                        const int32_t* vnni_corr, const int32_t* bias, const int32_t* multiplier,
                        const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, int32_t* acc) {
#if TVMD_CMSIS_X86
  const int vnni = vnni_corr != NULL ? tvmd_cmsis_vnni_level() : 0;
  if (vnni == TVMD_CMSIS_LEVEL_AVX512VNNI) {
    tvmd_cmsis_gemv_vnni_avx512(x, depth, w, n, vnni_corr, bias, multiplier, shift, q, out);
    return;
  }
  if (vnni == TVMD_CMSIS_LEVEL_AVXVNNI) {
    tvmd_cmsis_gemv_vnni_avx2(x, depth, w, n, vnni_corr, bias, multiplier, shift, q, out);
    return;
  }
  if (tvmd_cmsis_simd_level() >= TVMD_CMSIS_LEVEL_AVX2) { /* every AVX-512 CPU runs AVX2 */
    tvmd_cmsis_gemv_s8_avx2(x, depth, w, n, offset_sums, bias, multiplier, shift, q, out);
    return;
  }
#else
  (void)vnni_corr; /* the VNNI corrections serve only the x86 paths */
#endif
  gemv_portable(x, depth, w, n, offset_sums, acc);
  tvmd_cmsis_requantize_bias_s8(acc, bias, multiplier, shift, n, q, out);
}
