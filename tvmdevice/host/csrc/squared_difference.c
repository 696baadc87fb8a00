/*
 * SQUARED_DIFFERENCE, int8: TFLM's squared_difference.cc.  Each input plus
 * its offset is shifted left by left_shift (7) and rescaled by its own
 * multiplier (below one); the difference is squared in int32, rescaled to
 * the output, offset and clamped to int8.
 */
#include "broadcast.h"

static int8_t squared_difference_one(const void* params, int8_t a, int8_t b) {
  const tvmd_c_squared_difference_params_t* p = (const tvmd_c_squared_difference_params_t*)params;
  const int32_t shifted_a = ((int32_t)a + p->input1_offset) * ((int32_t)1 << p->left_shift);
  const int32_t shifted_b = ((int32_t)b + p->input2_offset) * ((int32_t)1 << p->left_shift);
  const int32_t scaled_a = tvmd_multiply_by_quantized_multiplier(shifted_a, p->input1_multiplier, p->input1_shift);
  const int32_t scaled_b = tvmd_multiply_by_quantized_multiplier(shifted_b, p->input2_multiplier, p->input2_shift);
  const int32_t diff = scaled_a - scaled_b;
  const int32_t y = tvmd_multiply_by_quantized_multiplier(diff * diff, p->output_multiplier, p->output_shift);
  return tvmd_c_clamp_s8(y + p->output_offset, INT8_MIN, INT8_MAX);
}

int32_t tvmd_c_squared_difference_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_squared_difference_params_t* p = (const tvmd_c_squared_difference_params_t*)params;
  (void)resource_handle;
  tvmd_c_broadcast_s8(p->size, p->out_shape, p->in1_strides, p->in2_strides, buffers, p, squared_difference_one);
  return TVMD_OK;
}
