/*
 * FULLY_CONNECTED, int8: TFLM's reference_integer_ops::FullyConnected
 * (per-tensor weights, with the weights offset) and FullyConnectedPerChannel
 * (per-channel weights, offset 0) in one loop: each output is
 * sum((input + input_offset) * (weight + filter_offset)) + bias, requantized
 * with its channel's multiplier and shift, offset and clamped.  Per-tensor
 * weights keep one multiplier and shift (quant_stride 0), not one per channel.
 */
#include "internal.h"

int32_t tvmd_c_fully_connected_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_fully_connected_params_t* p = (const tvmd_c_fully_connected_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  const int8_t* weights = (const int8_t*)buffers[1];
  const int32_t* bias = p->num_inputs == 3 ? (const int32_t*)buffers[2] : NULL;
  int8_t* output = (int8_t*)buffers[p->num_inputs];
  const int32_t depth = p->accum_depth;
  (void)resource_handle;
  for (int32_t b = 0; b < p->batches; ++b) {
    const int8_t* x = input + (size_t)b * (size_t)depth;
    for (int32_t oc = 0; oc < p->out_ch; ++oc) {
      const int8_t* w = weights + (size_t)oc * (size_t)depth;
      uint32_t acc = 0;
      for (int32_t d = 0; d < depth; ++d) {
        acc += (uint32_t)(((int32_t)x[d] + p->input_offset) * ((int32_t)w[d] + p->filter_offset));
      }
      if (bias != NULL) acc += (uint32_t)bias[oc];
      const size_t q = (size_t)oc * (size_t)p->quant_stride;
      const int32_t y = tvmd_multiply_by_quantized_multiplier(tvmd_wrap_i32(acc), p->multiplier[q], p->shift[q]);
      output[(size_t)b * (size_t)p->out_ch + (size_t)oc] =
          tvmd_c_clamp_s8(y + p->output_offset, p->act_min, p->act_max);
    }
  }
  return TVMD_OK;
}
