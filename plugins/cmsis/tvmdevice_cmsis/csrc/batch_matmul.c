/*
 * BATCH_MATMUL, int8, as CMSIS-NN's arm_batch_matmul_s8 organises it: the
 * operands are read in place and the zero points are folded out of the
 * inner loop.  With lo, ro the lhs and rhs offsets,
 *   sum_k (l + lo)(r + ro) = sum_k (l + lo) r + ro * (sum_k l + depth lo),
 * the lhs row sum taken once per row.  Every term wraps in uint32, where the
 * identity is exact, so the result is TFLM's int32 sum bit for bit on every
 * path:
 *  - lhs rows and rhs columns contiguous (adj_x false, adj_y true): two
 *    columns at a time against the row, mprofile.h's tvmd_cmsis_dot_s8_1x2
 *    (VMLADAVA on Helium, SMLAD on the DSP extension);
 *  - rhs rows contiguous (adj_y false, TFLite's usual layout): four columns
 *    at a time, each lhs value times four rhs values of a row (VMLA by a
 *    scalar over four int32 lanes on Helium, plain C elsewhere);
 *  - otherwise (both adjoint) the plain loop.
 */
#include "mprofile.h"

size_t tvmd_cmsis_batch_matmul_s8_get_buffer_size(const tvmd_cmsis_batch_matmul_params_t* p) {
  (void)p;
  return 0;
}

/* acc[t] = sum_k (row[k * l_k] + lo) * r[k * r_k + t] for the n <= 4
 * contiguous columns at r, modulo 2^32. */
static void columns_4(const int8_t* row, size_t l_k, const int8_t* r, size_t r_k, size_t depth, int32_t lo, size_t n,
                      uint32_t acc[4]) {
#if TVMD_CMSIS_MVE
  const mve_pred16_t live = vctp32q((uint32_t)n);
  int32x4_t sum = vdupq_n_s32(0);
  for (size_t k = 0; k < depth; ++k) {
    sum = vmlaq_n_s32(sum, vldrbq_z_s32(r + k * r_k, live), (int32_t)row[k * l_k] + lo); /* wraps */
  }
  vstrwq_u32(acc, vreinterpretq_u32_s32(sum));
#else
  uint32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (size_t k = 0; k < depth; ++k) {
    const int32_t v = (int32_t)row[k * l_k] + lo;
    const int8_t* c = r + k * r_k;
    a0 += (uint32_t)(v * c[0]);
    if (n > 1) a1 += (uint32_t)(v * c[1]);
    if (n > 2) a2 += (uint32_t)(v * c[2]);
    if (n > 3) a3 += (uint32_t)(v * c[3]);
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
#endif
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
  const int32_t multiplier = p->output_multiplier, shift = p->output_shift;
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
          /* ro * sum_k (l + lo), the same for every column of the row */
          const uint32_t row_term = ro * (row_sum + (uint32_t)depth * lo);
          if (l_k == 1 && r_k == 1) {
            for (size_t j = 0; j < cols; j += 2) {
              /* A lone last column pairs with itself; its copy is not stored. */
              const size_t j1 = j + 1 < cols ? j + 1 : j;
              int32_t s[2];
              tvmd_cmsis_dot_s8_1x2(row, r + j * r_j, r + j1 * r_j, (int32_t)depth, (int32_t)lo, s);
              out[j] = tvmd_cmsis_output_s8((int32_t)((uint32_t)s[0] + row_term), NULL, 0, multiplier, shift, &q);
              out[j1] = tvmd_cmsis_output_s8((int32_t)((uint32_t)s[1] + row_term), NULL, 0, multiplier, shift, &q);
            }
          } else if (r_j == 1) {
            for (size_t j = 0; j < cols; j += 4) {
              const size_t n = cols - j < 4 ? cols - j : 4;
              uint32_t acc[4];
              columns_4(row, l_k, r + j, r_k, depth, (int32_t)lo, n, acc);
              for (size_t t = 0; t < n; ++t) {
                out[j + t] = tvmd_cmsis_output_s8((int32_t)(acc[t] + row_term), NULL, 0, multiplier, shift, &q);
              }
            }
          } else {
            for (size_t j = 0; j < cols; ++j) {
              const int8_t* col = r + j * r_j;
              uint32_t dot = 0;
              for (size_t k = 0; k < depth; ++k) dot += (uint32_t)(((int32_t)row[k * l_k] + (int32_t)lo) * col[k * r_k]);
              out[j] = tvmd_cmsis_output_s8((int32_t)(dot + row_term), NULL, 0, multiplier, shift, &q);
            }
          }
          out += cols;
        }
      }
    }
  }
  return TVMD_OK;
}
