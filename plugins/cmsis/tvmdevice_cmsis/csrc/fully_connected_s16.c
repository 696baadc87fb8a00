/*
 * FULLY_CONNECTED on int16 activations with int8 weights (CMSIS-NN's
 * arm_fully_connected_s16; TFLM's reference_integer_ops FullyConnected /
 * FullyConnectedPerChannel for int16, whose values the tests check).  No
 * input or output offset (zero points 0); per-tensor weights add the weights
 * offset.  Each output is sum(input * (weight + filter_offset)) + bias at the
 * bias's width (s16.h).  Weights and input are read in place; no scratch.
 *
 * Two output channels at a time share every input load; their dot products
 * are mprofile.h's int16 x int8 ones (VMLALDAVA on Helium, SMLALD on the DSP
 * extension, plain C elsewhere, the host included), exact in int64 on every
 * path, so every path gives the same bits.
 */
#include "mprofile.h"
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
  const int32_t depth = p->accum_depth, out_ch = p->out_ch, filter_offset = p->filter_offset;
  for (int32_t b = 0; b < p->batches; ++b) {
    const int16_t* x = input + (size_t)b * (size_t)depth;
    int16_t* out = output + (size_t)b * (size_t)out_ch;
    /* sum(x * (w + offset)) = sum(x * w) + offset * sum(x): the same integer
     * (int64 sums of products below 2^23 over fewer than 2^31 terms are exact). */
    int64_t xsum = 0;
    if (filter_offset != 0) {
      for (int32_t d = 0; d < depth; ++d) xsum += x[d];
    }
    const uint64_t offset_term = (uint64_t)xsum * (uint64_t)(int64_t)filter_offset;
    for (int32_t oc = 0; oc < out_ch; oc += 2) {
      /* A lone last channel pairs with itself; its copy is not stored. */
      const int32_t oc1 = oc + 1 < out_ch ? oc + 1 : oc;
      int64_t dot[2];
      tvmd_cmsis_dot_s16_1x2(x, weights + (size_t)oc * (size_t)depth, weights + (size_t)oc1 * (size_t)depth, depth,
                             dot);
      out[oc] = tvmd_cmsis_output_s16((uint64_t)dot[0] + offset_term, p->bias_bits, bias, oc, p->multiplier[oc],
                                      p->shift[oc], p->act_min, p->act_max);
      out[oc1] = tvmd_cmsis_output_s16((uint64_t)dot[1] + offset_term, p->bias_bits, bias, oc1, p->multiplier[oc1],
                                       p->shift[oc1], p->act_min, p->act_max);
    }
  }
  return TVMD_OK;
}
