/*
 * PRELU, int8: TFLM's BroadcastPrelu4DSlow.  A non-negative input (minus its
 * zero point) is rescaled with the first multiplier; a negative one is
 * multiplied by alpha (minus its zero point) and rescaled with the second.
 */
#include "broadcast.h"

static int8_t prelu_one(const void* params, int8_t x, int8_t alpha) {
  const tvmd_c_prelu_params_t* p = (const tvmd_c_prelu_params_t*)params;
  const int32_t input = (int32_t)x + p->input_offset;
  int32_t y;
  if (input >= 0) {
    y = tvmd_multiply_by_quantized_multiplier(input, p->output_multiplier_1, p->output_shift_1);
  } else {
    const int32_t a = (int32_t)alpha + p->alpha_offset;
    y = tvmd_multiply_by_quantized_multiplier(input * a, p->output_multiplier_2, p->output_shift_2);
  }
  return tvmd_c_clamp_s8(y + p->output_offset, INT8_MIN, INT8_MAX);
}

int32_t tvmd_c_prelu_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_prelu_params_t* p = (const tvmd_c_prelu_params_t*)params;
  (void)resource_handle;
  tvmd_c_broadcast_s8(p->size, p->out_shape, p->in1_strides, p->in2_strides, buffers, p, prelu_one);
  return TVMD_OK;
}
