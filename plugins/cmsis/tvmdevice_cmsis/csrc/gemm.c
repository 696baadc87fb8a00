/*
 * int16 x int16 -> int32 GEMM shared by CONV_2D and FULLY_CONNECTED.
 *
 * Weights are pair-interleaved (two consecutive reduction steps of a column
 * side by side), the layout of CMSIS-NN-style "2 x 16-bit" multiply-adds: on
 * x86-64 with AVX-512 (AVX2), one vpmaddwd multiplies a broadcast input pair
 * with 16 (8) columns and adds both products (simd_x86.c).  The portable C loop below
 * computes the same sums, one output column block at a time, in an order a
 * compiler vectorizes over the columns.
 */
#include "internal.h"

static int simd_state = -1; /* -1: not detected yet */

int tvmd_cmsis_simd_levels(void) {
#if TVMD_CMSIS_X86
  return tvmd_cmsis_cpu_levels();
#else
  return 1 << TVMD_CMSIS_LEVEL_PORTABLE;
#endif
}

int tvmd_cmsis_simd_emulated(void) { return TVMD_CMSIS_SIMD_EMULATION; }

int tvmd_cmsis_max_simd_level(void) {
  const int levels = tvmd_cmsis_simd_levels();
  int level = TVMD_CMSIS_NUM_LEVELS - 1;
  while (level > TVMD_CMSIS_LEVEL_PORTABLE && !(levels & (1 << level))) level--;
  return level;
}

static int forced_level(void) {
  if (simd_state < 0) simd_state = tvmd_cmsis_max_simd_level();
  return simd_state;
}

int tvmd_cmsis_simd_level(void) {
  const int level = forced_level();
  if (level == TVMD_CMSIS_LEVEL_AVXVNNI) return TVMD_CMSIS_LEVEL_AVX2;
  if (level == TVMD_CMSIS_LEVEL_AVX512VNNI) return TVMD_CMSIS_LEVEL_AVX512;
  return level;
}

int tvmd_cmsis_vnni_level(void) {
  const int level = forced_level();
  return level == TVMD_CMSIS_LEVEL_AVXVNNI || level == TVMD_CMSIS_LEVEL_AVX512VNNI ? level : 0;
}

int tvmd_cmsis_set_simd_level(int level) {
  if (level < TVMD_CMSIS_LEVEL_PORTABLE || level >= TVMD_CMSIS_NUM_LEVELS) return -1;
  if (!(tvmd_cmsis_simd_levels() & (1 << level))) return -1;
  simd_state = level;
  return level;
}

int tvmd_cmsis_set_simd(int enabled) {
  simd_state = enabled ? tvmd_cmsis_max_simd_level() : TVMD_CMSIS_LEVEL_PORTABLE;
  return simd_state;
}

TVMD_CMSIS_SIMD
static void gemm_portable(const int16_t* restrict a, int32_t lda, int32_t m, int32_t k_pairs,
                          const int16_t* restrict w, int32_t ldw, int32_t* restrict acc) {
  for (int32_t r = 0; r < m; r++) {
    const int16_t* restrict row = a + (size_t)r * (size_t)lda;
    int32_t* restrict out = acc + (size_t)r * (size_t)ldw;
    for (int32_t j = 0; j < ldw; j++) out[j] = 0;
    for (int32_t p = 0; p < k_pairs; p++) {
      const int32_t x0 = row[2 * p], x1 = row[2 * p + 1];
      const int16_t* restrict wp = w + (size_t)p * (size_t)ldw * 2;
      for (int32_t j = 0; j < ldw; j++) out[j] += x0 * wp[2 * j] + x1 * wp[2 * j + 1];
    }
  }
}

void tvmd_cmsis_gemm_s16(const int16_t* a, int32_t lda, int32_t m, int32_t k_pairs, const int16_t* w,
                         int32_t ldw, int32_t* acc) {
#if TVMD_CMSIS_X86
  const int level = tvmd_cmsis_simd_level();
  if (level == TVMD_CMSIS_LEVEL_AVX512) {
    tvmd_cmsis_gemm_s16_avx512(a, lda, m, k_pairs, w, ldw, acc);
    return;
  }
  if (level == TVMD_CMSIS_LEVEL_AVX2) {
    tvmd_cmsis_gemm_s16_avx2(a, lda, m, k_pairs, w, ldw, acc);
    return;
  }
#endif
  gemm_portable(a, lda, m, k_pairs, w, ldw, acc);
}

void tvmd_cmsis_gemm_s8(const int16_t* a, int32_t lda, int32_t m, int32_t k_pairs, const int16_t* w, int32_t ldw,
                        int32_t n, const int32_t* bias, const int32_t* multiplier, const int32_t* shift,
                        const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo, int32_t* acc) {
#if TVMD_CMSIS_X86
  if (tvmd_cmsis_simd_level() == TVMD_CMSIS_LEVEL_AVX2) {
    tvmd_cmsis_gemm_s8_avx2(a, lda, m, k_pairs, w, ldw, n, bias, multiplier, shift, q, out, ldo);
    return;
  }
#endif
  tvmd_cmsis_gemm_s16(a, lda, m, k_pairs, w, ldw, acc);
  for (int32_t r = 0; r < m; r++) {
    tvmd_cmsis_requantize_bias_s8(acc + (size_t)r * (size_t)ldw, bias, multiplier, shift, n, q,
                                  out + (size_t)r * (size_t)ldo);
  }
}
