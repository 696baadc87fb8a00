/*
 * FULLY_CONNECTED on the int8 VNNI paths, when the kernels use a VNNI level
 * and prepare packed the operands (ops/fully_connected.py):
 *  - batch rows: each block of TVMD_CMSIS_CONV_ROWS rows as u = x + 128
 *    bytes (x ^ 0x80, what vpdpbusd takes), zero padded to a multiple of 4,
 *    on the VNNI GEMM (gemm_vnni.c, simd_x86_vnni.c); the bytes fit in the
 *    int16 path's rows scratch (half its element size);
 *  - batch 1: the int8 weight panels of the GEMV (gemv.c) read with
 *    vpdpbusd, the sums started at vnni_correction (simd_x86_gemv_vnni.c).
 */
#include <string.h>

#include "internal.h"

void tvmd_cmsis_fully_connected_vnni(const tvmd_cmsis_fully_connected_params_t* p, const int8_t* input,
                                     const int32_t* bias, int8_t* output, void* rows_scratch) {
  uint8_t* rows = (uint8_t*)rows_scratch;
  const int32_t depth = p->accum_depth, k4 = (depth + 3) / 4, lda = 4 * k4;
  for (int32_t b0 = 0; b0 < p->batches; b0 += TVMD_CMSIS_CONV_ROWS) {
    const int32_t m = tvmd_cmsis_min(TVMD_CMSIS_CONV_ROWS, p->batches - b0);
    for (int32_t r = 0; r < m; r++) {
      uint8_t* row = rows + (size_t)r * (size_t)lda;
      const int8_t* src = input + (size_t)(b0 + r) * (size_t)depth;
      for (int32_t i = 0; i < depth; i++) row[i] = (uint8_t)((uint8_t)src[i] ^ 0x80u);
      memset(row + depth, 0, (size_t)(lda - depth));
    }
    {
      const tvmd_cmsis_vnni_rows_t a = {rows, (size_t)lda, 0, 1, k4, 0}; /* one segment of all quads */
      tvmd_cmsis_gemm_vnni_s8(&a, m, p->weights_vnni, p->ldw, p->out_ch, p->vnni_correction, bias, p->multiplier,
                              p->shift, &p->q, output + (size_t)b0 * (size_t)p->out_ch, p->out_ch);
    }
  }
}
