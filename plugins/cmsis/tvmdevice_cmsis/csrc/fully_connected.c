/*
 * FULLY_CONNECTED, int8: TFLM's reference_integer_ops::FullyConnected
 * (per-tensor weights with a weights offset) and FullyConnectedPerChannel
 * (CMSIS-NN's arm_fully_connected_s8 / _per_channel_s8 match).
 *
 * The weights, with the weights offset already added, were rearranged for
 * the GEMM (gemm.c) at compile time; up to TVMD_CMSIS_CONV_ROWS batch rows
 * are widened to int16 with the input offset added, in scratch.  A single
 * row (batch 1) reads every weight once: there the weights come as int8
 * panels when they fit (tvmd_cmsis_gemv_s8, gemv.c), half the bytes, and
 * the raw input is read in place.
 * Per-tensor quantization arrives as per-channel arrays of equal entries, so
 * one requantization loop serves both.
 */
#include "internal.h"

/* The widened GEMM rows; none at batch 1 on int8 panels (depth_s8 > 0). */
static size_t rows_bytes(const tvmd_cmsis_fully_connected_params_t* p) {
  if (p->depth_s8 > 0) return 0;
  const size_t bytes = (size_t)TVMD_CMSIS_CONV_ROWS * 2 * (size_t)p->k_pairs * sizeof(int16_t);
  return (bytes + 63u) & ~(size_t)63u;
}

size_t tvmd_cmsis_fully_connected_s8_get_buffer_size(const tvmd_cmsis_fully_connected_params_t* p) {
  return rows_bytes(p) + (size_t)TVMD_CMSIS_CONV_ROWS * (size_t)p->ldw * sizeof(int32_t);
}

TVMD_CMSIS_SIMD
int32_t tvmd_cmsis_fully_connected_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_fully_connected_params_t* p = (const tvmd_cmsis_fully_connected_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_FULLY_CONNECTED) return TVMD_ERR_INVALID_ARGUMENT;
  tvmd_cmsis_weighted_io_t io;
  const int32_t status = tvmd_cmsis_weighted_enter(buffers, p->num_inputs, 1, resource_handle,
                                                   TVMD_CMSIS_KIND_FULLY_CONNECTED, p->macs, &io);
  if (status != TVMD_OK) return status;
  const int8_t* input = io.input;
  const int32_t* bias = io.bias;
  int8_t* output = io.output;
  void* scratch = io.scratch;

  int16_t* rows = (int16_t*)scratch;
  int32_t* acc = (int32_t*)((uint8_t*)scratch + rows_bytes(p));
  const int32_t depth = p->accum_depth, lda = 2 * p->k_pairs;
  if (p->weights_s8 != NULL) { /* batch 1 */
    tvmd_cmsis_gemv_s8(input, depth, p->weights_s8, p->out_ch, p->offset_sums, p->vnni_correction, bias,
                       p->multiplier, p->shift, &p->q, output, acc);
    return TVMD_OK;
  }
  if (p->weights_vnni != NULL && tvmd_cmsis_vnni_level()) { /* the int8 VNNI GEMM (fully_connected_vnni.c) */
    tvmd_cmsis_fully_connected_vnni(p, input, bias, output, rows);
    return TVMD_OK;
  }
  for (int32_t b0 = 0; b0 < p->batches; b0 += TVMD_CMSIS_CONV_ROWS) {
    const int32_t m = tvmd_cmsis_min(TVMD_CMSIS_CONV_ROWS, p->batches - b0);
    for (int32_t r = 0; r < m; r++) {
      const int8_t* restrict src = input + (size_t)(b0 + r) * (size_t)depth;
      int16_t* restrict dst = rows + (size_t)r * (size_t)lda;
      for (int32_t i = 0; i < depth; i++) dst[i] = (int16_t)(src[i] + p->q.input_offset);
      if (depth & 1) dst[depth] = 0; /* the pair padding */
    }
    tvmd_cmsis_gemm_s8(rows, lda, m, p->k_pairs, p->weights, p->ldw, p->out_ch, bias, p->multiplier, p->shift,
                       &p->q, output + (size_t)b0 * (size_t)p->out_ch, p->out_ch, acc);
  }
  return TVMD_OK;
}
