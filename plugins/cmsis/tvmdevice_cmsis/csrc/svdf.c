/*
 * SVDF, int8 input and output, with an int16 (CMSIS-NN's
 * arm_svdf_state_s16_s8) or int8 (arm_svdf_s8) activation state and time
 * weights; TFLM's EvalIntegerSvdfReference gives the values the tests check
 * (including the state zero point, which arm_svdf_s8 does not take).
 *
 * Each call: the state ([batches][filters][memory], a variable tensor that
 * persists between runs) moves left by one value; each filter's newest slot
 * gets the feature matmul rescaled to the state and clamped; each filter's
 * dot product with its time weights goes to scratch; rank filters per unit
 * are summed onto the bias and rescaled to the output.  int32 sums wrap in
 * uint32 as the reference's do.  The feature matmul's dot products, two
 * filters at a time, are mprofile.h's (Helium, DSP or plain C).
 *
 * Buffers: input, weights_feature, weights_time, bias (or NULL), state,
 * output, scratch (int32: batches x filters, then batches x units).
 */
#include <string.h>

#include "mprofile.h"
#include "s16.h"

size_t tvmd_cmsis_svdf_s8_get_buffer_size(const tvmd_cmsis_svdf_params_t* p) {
  return ((size_t)p->batches * (size_t)p->n_filter + (size_t)p->batches * (size_t)p->n_unit) * sizeof(int32_t);
}

static inline int32_t load(const void* v, int bits, size_t i) {
  return bits == 16 ? (int32_t)((const int16_t*)v)[i] : (int32_t)((const int8_t*)v)[i];
}

/* Store the state type's two's-complement wrap of v (C++'s narrowing). */
static inline void store(void* v, int bits, size_t i, int32_t x) {
  if (bits == 16) {
    const uint32_t u = (uint32_t)x & 0xFFFFu;
    ((int16_t*)v)[i] = (int16_t)(u < 0x8000u ? (int32_t)u : (int32_t)u - 0x10000);
  } else {
    const uint32_t u = (uint32_t)x & 0xFFu;
    ((int8_t*)v)[i] = (int8_t)(u < 0x80u ? (int32_t)u : (int32_t)u - 0x100);
  }
}

int32_t tvmd_cmsis_svdf_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_svdf_params_t* p = (const tvmd_cmsis_svdf_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_SVDF || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (p->state_bits != 8 && p->state_bits != 16) return TVMD_ERR_INVALID_ARGUMENT;
  const int8_t* input = (const int8_t*)buffers[0];
  const int8_t* weights_feature = (const int8_t*)buffers[1];
  const void* weights_time = buffers[2];
  const int32_t* bias = p->has_bias ? (const int32_t*)buffers[3] : NULL;
  void* state = buffers[4];
  int8_t* output = (int8_t*)buffers[5];
  int32_t* filter_sums = (int32_t*)buffers[6];
  if (input == NULL || weights_feature == NULL || weights_time == NULL || state == NULL || output == NULL ||
      filter_sums == NULL || (p->has_bias && bias == NULL)) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  const uint64_t macs = (uint64_t)p->batches * (uint64_t)p->n_filter * (uint64_t)(p->n_input + p->n_memory);
  const int32_t status = tvmd_cmsis_enter(resource_handle, TVMD_CMSIS_KIND_SVDF, macs);
  if (status != TVMD_OK) return status;
  const int bits = p->state_bits;
  const size_t filters = (size_t)p->n_filter, memory = (size_t)p->n_memory, esize = (size_t)bits / 8;
  const size_t size = (size_t)p->batches * filters * memory;
  int32_t* unit_sums = filter_sums + (size_t)p->batches * filters;

  /* Shift the whole state left by one value (its last slot is written next). */
  if (size > 1) memmove(state, (const uint8_t*)state + esize, (size - 1) * esize);
  for (int32_t b = 0; b < p->batches; ++b) {
    const int8_t* x = input + (size_t)b * (size_t)p->n_input;
    for (size_t f = 0; f < filters; f += 2) {
      /* Two filters per pass (mprofile.h's dot products, modulo 2^32); a lone
       * last filter pairs with itself and its copy is not stored. */
      const size_t f1 = f + 1 < filters ? f + 1 : f;
      int32_t acc[2];
      tvmd_cmsis_dot_s8_1x2(x, weights_feature + f * (size_t)p->n_input, weights_feature + f1 * (size_t)p->n_input,
                            p->n_input, -p->input_zero_point, acc);
      for (int j = 0; j < 2; ++j) {
        int32_t v = tvmd_multiply_by_quantized_multiplier(acc[j], p->scale1_multiplier, p->scale1_shift);
        v = tvmd_cmsis_min(tvmd_cmsis_max(v, p->state_min), p->state_max);
        store(state, bits, ((size_t)b * filters + (j ? f1 : f)) * memory + memory - 1, p->state_zero_point + v);
      }
    }
  }
  /* Time weights against each filter's state row. */
  for (int32_t b = 0; b < p->batches; ++b) {
    for (size_t f = 0; f < filters; ++f) {
      const size_t row = ((size_t)b * filters + f) * memory;
      uint32_t acc = 0;
      for (size_t j = 0; j < memory; ++j) {
        acc += (uint32_t)load(weights_time, bits, f * memory + j) *
               (uint32_t)(load(state, bits, row + j) - p->state_zero_point);
      }
      filter_sums[(size_t)b * filters + f] = tvmd_wrap_i32(acc);
    }
  }
  /* rank filters per unit onto the bias, rescaled to the output. */
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
    output[i] = (int8_t)tvmd_cmsis_min(tvmd_cmsis_max(v + p->output_zero_point, INT8_MIN), INT8_MAX);
  }
  return TVMD_OK;
}
