/*
 * FULLY_CONNECTED on int16 activations with int8 weights (CMSIS-NN's
 * arm_fully_connected_s16; TFLM's reference_integer_ops FullyConnected /
 * FullyConnectedPerChannel for int16, whose values the tests check).  No
 * input or output offset (zero points 0); per-tensor weights add the weights
 * offset.  Each output is sum(input * (weight + filter_offset)) + bias at the
 * bias's width (s16.h).  Weights and input are read in place; no scratch.
 */
#include "s16.h"

size_t tvmd_cmsis_fully_connected_s16_get_buffer_size(const tvmd_cmsis_fully_connected_s16_params_t* p) {
  (void)p;
  return 0;
}

int32_t tvmd_cmsis_fully_connected_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_fully_connected_s16_params_t* p = (const tvmd_cmsis_fully_connected_s16_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_FULLY_CONNECTED_S16 || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (p->num_inputs != 2 && p->num_inputs != 3) return TVMD_ERR_INVALID_ARGUMENT;
  const int16_t* input = (const int16_t*)buffers[0];
  const int8_t* weights = (const int8_t*)buffers[1];
  const void* bias = p->num_inputs == 3 ? buffers[2] : NULL;
  int16_t* output = (int16_t*)buffers[p->num_inputs];
  if (input == NULL || weights == NULL || output == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int32_t status = tvmd_cmsis_enter(resource_handle, TVMD_CMSIS_KIND_FULLY_CONNECTED_S16, p->macs);
  if (status != TVMD_OK) return status;
  const int32_t depth = p->accum_depth;
  for (int32_t b = 0; b < p->batches; ++b) {
    const int16_t* x = input + (size_t)b * (size_t)depth;
    int16_t* out = output + (size_t)b * (size_t)p->out_ch;
    for (int32_t oc = 0; oc < p->out_ch; ++oc) {
      const int8_t* w = weights + (size_t)oc * (size_t)depth;
      /* Sum of x * w, then x * offset folded in once: the same integer, with
       * products below 2^23 summed over fewer than 2^31 terms (exact in int64). */
      int64_t dot = 0, xsum = 0;
      for (int32_t d = 0; d < depth; ++d) {
        dot += (int32_t)x[d] * (int32_t)w[d];
        xsum += x[d];
      }
      const uint64_t acc = (uint64_t)dot + (uint64_t)xsum * (uint64_t)(int64_t)p->filter_offset;
      out[oc] = tvmd_cmsis_output_s16(acc, p->bias_bits, bias, oc, p->multiplier[oc], p->shift[oc], p->act_min,
                                      p->act_max);
    }
  }
  return TVMD_OK;
}
