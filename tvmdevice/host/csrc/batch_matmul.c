/*
 * BATCH_MATMUL, int8: TFLM's reference_ops::BatchMatMul.  Each output is the
 * int32 sum over the depth of (lhs - lhs zero point) * (rhs - rhs zero
 * point), requantized, offset and clamped to int8.  adj_x / adj_y read an
 * operand with its last two dimensions swapped (TFLM transposes it into a
 * buffer first; the sum is the same).  Batch dimensions broadcast through
 * strides (0 along a broadcast dimension), right-aligned to three.
 */
#include "internal.h"

int32_t tvmd_c_batch_matmul_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_batch_matmul_params_t* p = (const tvmd_c_batch_matmul_params_t*)params;
  const int8_t* lhs = (const int8_t*)buffers[0];
  const int8_t* rhs = (const int8_t*)buffers[1];
  int8_t* out = (int8_t*)buffers[2];
  const size_t rows = (size_t)p->rows, cols = (size_t)p->cols, depth = (size_t)p->depth;
  /* Element steps along i and k of lhs, k and j of rhs. */
  const size_t l_i = p->adj_x ? 1 : depth, l_k = p->adj_x ? rows : 1;
  const size_t r_k = p->adj_y ? 1 : cols, r_j = p->adj_y ? depth : 1;
  (void)resource_handle;
  for (int32_t b0 = 0; b0 < p->out_batch[0]; ++b0) {
    for (int32_t b1 = 0; b1 < p->out_batch[1]; ++b1) {
      for (int32_t b2 = 0; b2 < p->out_batch[2]; ++b2) {
        const int8_t* l = lhs + (size_t)b0 * (size_t)p->lhs_batch_strides[0] +
                          (size_t)b1 * (size_t)p->lhs_batch_strides[1] + (size_t)b2 * (size_t)p->lhs_batch_strides[2];
        const int8_t* r = rhs + (size_t)b0 * (size_t)p->rhs_batch_strides[0] +
                          (size_t)b1 * (size_t)p->rhs_batch_strides[1] + (size_t)b2 * (size_t)p->rhs_batch_strides[2];
        for (size_t i = 0; i < rows; ++i) {
          for (size_t j = 0; j < cols; ++j) {
            uint32_t acc = 0;
            for (size_t k = 0; k < depth; ++k) {
              acc += (uint32_t)(((int32_t)l[i * l_i + k * l_k] + p->lhs_offset) *
                                ((int32_t)r[k * r_k + j * r_j] + p->rhs_offset));
            }
            const int32_t y = tvmd_multiply_by_quantized_multiplier(tvmd_wrap_i32(acc), p->output_multiplier,
                                                                    p->output_shift);
            *out++ = tvmd_c_clamp_s8(y + p->output_offset, INT8_MIN, INT8_MAX);
          }
        }
      }
    }
  }
  return TVMD_OK;
}
