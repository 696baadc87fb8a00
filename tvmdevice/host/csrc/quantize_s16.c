/*
 * QUANTIZE to and from int16: TFLM's quantize_common.cc for the int16x8
 * variants.  float32 -> int16 is reference_ops::AffineQuantize (the float32
 * quotient value / scale rounded half away from zero, plus the zero point,
 * clamped to int16); int8 <-> int16, int16 -> int16 and int16 -> int32 are
 * reference_ops::Requantize, clamped to the output type.
 */
#include "internal.h"

/* round(q) half away from zero, clamped to [-2^17, 2^17] (NaN gives 0): past
 * that range int16 saturates whatever the zero point. */
static inline int32_t round_clamped16(float q) {
  if (!(q == q)) return 0;
  if (q > 131072.0f) return 131072;
  if (q < -131072.0f) return -131072;
  const int32_t t = (int32_t)q; /* truncates toward zero */
  const float frac = q - (float)t; /* exact: |q| < 2^24 */
  if (frac >= 0.5f) return t + 1;
  if (frac <= -0.5f) return t - 1;
  return t;
}

static inline int32_t requantize_one(const tvmd_c_quantize_params_t* p, int32_t x) {
  return tvmd_multiply_by_quantized_multiplier(x + p->input_offset, p->multiplier, p->shift) + p->output_offset;
}

int32_t tvmd_c_quantize_f32_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_quantize_params_t* p = (const tvmd_c_quantize_params_t*)params;
  const float* input = (const float*)buffers[0];
  int16_t* output = (int16_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    const int32_t q = round_clamped16(input[i] / p->output_scale);
    output[i] = (int16_t)tvmd_clamp_i32(q + p->output_offset, INT16_MIN, INT16_MAX);
  }
  return TVMD_OK;
}

int32_t tvmd_c_requantize_s8_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_quantize_params_t* p = (const tvmd_c_quantize_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int16_t* output = (int16_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    output[i] = (int16_t)tvmd_clamp_i32(requantize_one(p, input[i]), INT16_MIN, INT16_MAX);
  }
  return TVMD_OK;
}

int32_t tvmd_c_requantize_s16_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_quantize_params_t* p = (const tvmd_c_quantize_params_t*)params;
  const int16_t* input = (const int16_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    output[i] = tvmd_c_clamp_s8(requantize_one(p, input[i]), INT8_MIN, INT8_MAX);
  }
  return TVMD_OK;
}

/* int16 -> int32: the requantized value plus the output zero point in 32-bit
 * arithmetic, which wraps (TFLM's int32 sum; its clamp to int32 is then a no-op). */
int32_t tvmd_c_requantize_s16_s32(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_quantize_params_t* p = (const tvmd_c_quantize_params_t*)params;
  const int16_t* input = (const int16_t*)buffers[0];
  int32_t* output = (int32_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    const int32_t scaled = tvmd_multiply_by_quantized_multiplier(input[i] + p->input_offset, p->multiplier, p->shift);
    output[i] = (int32_t)((uint32_t)scaled + (uint32_t)p->output_offset);
  }
  return TVMD_OK;
}

int32_t tvmd_c_requantize_s16_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_quantize_params_t* p = (const tvmd_c_quantize_params_t*)params;
  const int16_t* input = (const int16_t*)buffers[0];
  int16_t* output = (int16_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    output[i] = (int16_t)tvmd_clamp_i32(requantize_one(p, input[i]), INT16_MIN, INT16_MAX);
  }
  return TVMD_OK;
}
