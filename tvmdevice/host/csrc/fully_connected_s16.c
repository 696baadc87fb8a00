/*
 * FULLY_CONNECTED on int16 activations with int8 weights: TFLM's
 * reference_integer_ops::FullyConnected (per-tensor weights, with the weights
 * offset) and FullyConnectedPerChannel (offset 0) for int16.  No input or
 * output offset (the zero points are 0); each output is
 * sum(input * (weight + filter_offset)) + bias, accumulated in the bias's
 * type (bias_bits 64: int64 and the 64-bit requantization; 32: int32,
 * wrapping, and the 32-bit one), then clamped.
 */
#include "internal.h"

int32_t tvmd_c_fully_connected_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_fully_connected_s16_params_t* p = (const tvmd_c_fully_connected_s16_params_t*)params;
  const int16_t* input = (const int16_t*)buffers[0];
  const int8_t* weights = (const int8_t*)buffers[1];
  const void* bias = p->num_inputs == 3 ? buffers[2] : NULL;
  int16_t* output = (int16_t*)buffers[p->num_inputs];
  const int32_t depth = p->accum_depth;
  (void)resource_handle;
  for (int32_t b = 0; b < p->batches; ++b) {
    const int16_t* x = input + (size_t)b * (size_t)depth;
    for (int32_t oc = 0; oc < p->out_ch; ++oc) {
      const int8_t* w = weights + (size_t)oc * (size_t)depth;
      const size_t q = (size_t)oc * (size_t)p->quant_stride;
      uint64_t acc = 0; /* the low 32 bits are the int32 accumulator */
      for (int32_t d = 0; d < depth; ++d) {
        acc += (uint64_t)(int64_t)((int32_t)x[d] * ((int32_t)w[d] + p->filter_offset));
      }
      int32_t y;
      if (p->bias_bits == 64) {
        if (bias != NULL) acc += (uint64_t)((const int64_t*)bias)[oc];
        y = tvmd_multiply_by_quantized_multiplier_64(tvmd_wrap_i64(acc), p->multiplier[q], p->shift[q]);
      } else {
        uint32_t acc32 = (uint32_t)acc;
        if (bias != NULL) acc32 += (uint32_t)((const int32_t*)bias)[oc];
        y = tvmd_multiply_by_quantized_multiplier(tvmd_wrap_i32(acc32), p->multiplier[q], p->shift[q]);
      }
      output[(size_t)b * (size_t)p->out_ch + (size_t)oc] = (int16_t)tvmd_clamp_i32(y, p->act_min, p->act_max);
    }
  }
  return TVMD_OK;
}
