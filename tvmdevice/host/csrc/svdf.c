/*
 * SVDF, int8 input and output: TFLM's EvalIntegerSvdfReference with an int16
 * (svdf_s8_s16) or int8 (svdf_s8_s8) activation state and time weights.
 *
 * The state ([batches][filters][memory]) shifts left by one value; each
 * filter's newest slot gets the rescaled feature matmul; each filter's dot
 * product with its time weights is summed, rank filters per unit, onto the
 * bias and rescaled to the output.  int32 sums wrap like TFLM's.
 * Buffers: input, weights_feature, weights_time, bias (or NULL), state,
 * output, scratch (int32: batches x filters, then batches x units).
 */
#include <string.h>

#include "internal.h"

static int32_t state_at(const void* state, int bits, size_t i) {
  return bits == 16 ? (int32_t)((const int16_t*)state)[i] : (int32_t)((const int8_t*)state)[i];
}

static void state_set(void* state, int bits, size_t i, int32_t v) {
  /* The state type's two's-complement wrap, as the C++ narrowing conversion does. */
  if (bits == 16) {
    const uint32_t u = (uint32_t)v & 0xFFFFu;
    ((int16_t*)state)[i] = (int16_t)(u < 0x8000u ? (int32_t)u : (int32_t)u - 0x10000);
  } else {
    const uint32_t u = (uint32_t)v & 0xFFu;
    ((int8_t*)state)[i] = (int8_t)(u < 0x80u ? (int32_t)u : (int32_t)u - 0x100);
  }
}

static int32_t svdf(const void* params, void* const* buffers, int bits) {
  const tvmd_c_svdf_params_t* p = (const tvmd_c_svdf_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  const int8_t* weights_feature = (const int8_t*)buffers[1];
  const void* weights_time = buffers[2];
  const int32_t* bias = p->has_bias ? (const int32_t*)buffers[3] : NULL;
  void* state = buffers[4];
  int8_t* output = (int8_t*)buffers[5];
  int32_t* filter_sums = (int32_t*)buffers[6];
  int32_t* unit_sums = filter_sums + (size_t)p->batches * (size_t)p->n_filter;
  const size_t memory = (size_t)p->n_memory;
  const size_t filters = (size_t)p->n_filter;
  const size_t size = (size_t)p->batches * filters * memory;
  const size_t esize = (size_t)(bits / 8);
  memmove(state, (const uint8_t*)state + esize, (size_t)(size - 1) * esize);
  for (int32_t b = 0; b < p->batches; ++b) {
    const int8_t* x = input + (size_t)b * (size_t)p->n_input;
    for (size_t f = 0; f < filters; ++f) {
      const int8_t* w = weights_feature + f * (size_t)p->n_input;
      uint32_t acc = 0;
      for (int32_t i = 0; i < p->n_input; ++i) acc += (uint32_t)((int32_t)w[i] * ((int32_t)x[i] - p->input_zero_point));
      int32_t v = tvmd_multiply_by_quantized_multiplier(tvmd_wrap_i32(acc), p->scale1_multiplier, p->scale1_shift);
      v = tvmd_clamp_i32(v, p->state_min, p->state_max);
      state_set(state, bits, ((size_t)b * filters + f) * memory + memory - 1, p->state_zero_point + v);
    }
  }
  for (int32_t b = 0; b < p->batches; ++b) {
    for (size_t f = 0; f < filters; ++f) {
      const size_t row = ((size_t)b * filters + f) * memory;
      uint32_t acc = 0;
      for (size_t j = 0; j < memory; ++j) {
        const int32_t w = state_at(weights_time, bits, f * memory + j);
        acc += (uint32_t)w * (uint32_t)(state_at(state, bits, row + j) - p->state_zero_point);
      }
      filter_sums[(size_t)b * filters + f] = tvmd_wrap_i32(acc);
    }
  }
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t u = 0; u < p->n_unit; ++u) {
      uint32_t acc = bias != NULL ? (uint32_t)bias[u] : 0u;
      const int32_t* sums = filter_sums + (size_t)b * filters + (size_t)u * (size_t)p->rank;
      for (int32_t k = 0; k < p->rank; ++k) acc += (uint32_t)sums[k];
      unit_sums[(size_t)b * (size_t)p->n_unit + (size_t)u] = tvmd_wrap_i32(acc);
    }
  }
  const size_t outputs = (size_t)p->batches * (size_t)p->n_unit;
  for (size_t i = 0; i < outputs; ++i) {
    const int32_t v = tvmd_multiply_by_quantized_multiplier(unit_sums[i], p->scale2_multiplier, p->scale2_shift);
    output[i] = tvmd_c_clamp_s8(v + p->output_zero_point, INT8_MIN, INT8_MAX);
  }
  return TVMD_OK;
}

int32_t tvmd_c_svdf_s8_s16(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  return svdf(params, buffers, 16);
}

int32_t tvmd_c_svdf_s8_s8(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  return svdf(params, buffers, 8);
}
