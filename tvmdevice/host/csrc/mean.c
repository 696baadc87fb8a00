/*
 * MEAN, int8: TFLM's reference_ops::QuantizedMeanOrSum (which current TFLM
 * uses for every int8 MEAN).  Each output is the int32 sum of its reduced
 * elements, plus input_offset * count, requantized by multiplier and shift
 * (1 / count folded in), offset and clamped.  Shapes are right-aligned to
 * TVMD_C_MEAN_DIMS dimensions; the outputs come in input order of the kept
 * dimensions, which is the output's order with or without keep_dims.  Each
 * output sums its own elements, so no scratch is needed.
 */
#include "internal.h"

int32_t tvmd_c_mean_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_mean_params_t* p = (const tvmd_c_mean_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* out = (int8_t*)buffers[2]; /* buffers[1] is the axis tensor */
  enum { D = TVMD_C_MEAN_DIMS };
  size_t strides[D];
  int32_t kept[D], summed[D]; /* per dimension: extent over outputs, extent summed */
  size_t outputs = 1;
  (void)resource_handle;
  strides[D - 1] = 1;
  for (int d = D - 2; d >= 0; --d) strides[d] = strides[d + 1] * (size_t)p->shape[d + 1];
  for (int d = 0; d < D; ++d) {
    kept[d] = p->reduced[d] ? 1 : p->shape[d];
    summed[d] = p->reduced[d] ? p->shape[d] : 1;
    outputs *= (size_t)kept[d];
  }
  int32_t o[D] = {0};
  for (size_t n = 0; n < outputs; ++n) {
    size_t base = 0;
    for (int d = 0; d < D; ++d) base += (size_t)o[d] * strides[d];
    uint32_t sum = 0;
    int32_t r[D] = {0};
    for (int32_t k = 0; k < p->count; ++k) {
      size_t at = base;
      for (int d = 0; d < D; ++d) at += (size_t)r[d] * strides[d];
      sum += (uint32_t)(int32_t)input[at];
      for (int d = D - 1; d >= 0; --d) {
        if (++r[d] < summed[d]) break;
        r[d] = 0;
      }
    }
    const int32_t shifted = tvmd_wrap_i32(sum + (uint32_t)p->input_offset * (uint32_t)p->count);
    const int32_t y = tvmd_multiply_by_quantized_multiplier(shifted, p->multiplier, p->shift) + p->output_offset;
    out[n] = tvmd_c_clamp_s8(y, INT8_MIN, INT8_MAX);
    for (int d = D - 1; d >= 0; --d) {
      if (++o[d] < kept[d]) break;
      o[d] = 0;
    }
  }
  return TVMD_OK;
}
