/*
 * BATCH_MATMUL, int8, as CMSIS-NN's arm_batch_matmul_s8 organises it: the
 * operands are read in place and the zero points are folded out of the
 * inner loop,
 *   sum_k (l + lo)(r + ro) = sum_k l*r + ro * sum_k l + lo * sum_k r + depth*lo*ro,
 * with the lhs row sums and rhs column sums computed once per batch row and
 * column.  Every term wraps in uint32, where the identity is exact, so the
 * result is TFLM's int32 sum bit for bit.
 */
#include "internal.h"

size_t tvmd_cmsis_batch_matmul_s8_get_buffer_size(const tvmd_cmsis_batch_matmul_params_t* p) {
  (void)p;
  return 0;
}

int32_t tvmd_cmsis_batch_matmul_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_batch_matmul_params_t* p = (const tvmd_cmsis_batch_matmul_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_BATCH_MATMUL || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int8_t* lhs = (const int8_t*)buffers[0];
  const int8_t* rhs = (const int8_t*)buffers[1];
  int8_t* out = (int8_t*)buffers[2];
  if (lhs == NULL || rhs == NULL || out == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int32_t status = tvmd_cmsis_enter(resource_handle, TVMD_CMSIS_KIND_BATCH_MATMUL, p->macs);
  if (status != TVMD_OK) return status;

  const size_t rows = (size_t)p->rows, cols = (size_t)p->cols, depth = (size_t)p->depth;
  const size_t l_i = p->adj_x ? 1 : depth, l_k = p->adj_x ? rows : 1;
  const size_t r_k = p->adj_y ? 1 : cols, r_j = p->adj_y ? depth : 1;
  const uint32_t lo = (uint32_t)p->lhs_offset, ro = (uint32_t)p->rhs_offset;
  const uint32_t constant = (uint32_t)depth * lo * ro;
  const tvmd_cmsis_quant_t q = {0, p->output_offset, INT8_MIN, INT8_MAX};
  for (int32_t b0 = 0; b0 < p->out_batch[0]; ++b0) {
    for (int32_t b1 = 0; b1 < p->out_batch[1]; ++b1) {
      for (int32_t b2 = 0; b2 < p->out_batch[2]; ++b2) {
        const int8_t* l = lhs + (size_t)b0 * (size_t)p->lhs_batch_strides[0] +
                          (size_t)b1 * (size_t)p->lhs_batch_strides[1] + (size_t)b2 * (size_t)p->lhs_batch_strides[2];
        const int8_t* r = rhs + (size_t)b0 * (size_t)p->rhs_batch_strides[0] +
                          (size_t)b1 * (size_t)p->rhs_batch_strides[1] + (size_t)b2 * (size_t)p->rhs_batch_strides[2];
        for (size_t i = 0; i < rows; ++i) {
          const int8_t* row = l + i * l_i;
          uint32_t row_sum = 0;
          for (size_t k = 0; k < depth; ++k) row_sum += (uint32_t)(int32_t)row[k * l_k];
          for (size_t j = 0; j < cols; ++j) {
            const int8_t* col = r + j * r_j;
            uint32_t dot = 0, col_sum = 0;
            for (size_t k = 0; k < depth; ++k) {
              const int32_t rv = col[k * r_k];
              dot += (uint32_t)((int32_t)row[k * l_k] * rv);
              col_sum += (uint32_t)rv;
            }
            const uint32_t acc = dot + ro * row_sum + lo * col_sum + constant;
            *out++ = tvmd_cmsis_output_s8((int32_t)acc, NULL, 0, p->output_multiplier, p->output_shift, &q);
          }
        }
      }
    }
  }
  return TVMD_OK;
}
