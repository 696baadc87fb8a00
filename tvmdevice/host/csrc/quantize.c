/*
 * QUANTIZE and DEQUANTIZE: TFLM's quantize_common.cc and dequantize.
 *
 * float32 -> int8 is reference_ops::AffineQuantize: the float32 quotient
 * value / scale rounded half away from zero (TfLiteRound), plus the zero
 * point, clamped to int8.  int8 -> int8 is reference_ops::Requantize.
 * int8 -> float32 is scale * (value - zero point) in float32.  These are the
 * only kernels here that use float, as TFLM's do.
 */
#include "internal.h"

/* round(q) half away from zero, clamped to [-512, 512] (NaN gives 0): past
 * that range int8 saturates whatever the zero point, so libm is not needed. */
static inline int32_t round_clamped(float q) {
  if (!(q == q)) return 0;
  if (q > 512.0f) return 512;
  if (q < -512.0f) return -512;
  const int32_t t = (int32_t)q; /* truncates toward zero */
  const float frac = q - (float)t; /* exact: |q| < 2^24 */
  if (frac >= 0.5f) return t + 1;
  if (frac <= -0.5f) return t - 1;
  return t;
}

int32_t tvmd_c_quantize_f32_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_quantize_params_t* p = (const tvmd_c_quantize_params_t*)params;
  const float* input = (const float*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    const int32_t q = round_clamped(input[i] / p->output_scale);
    output[i] = tvmd_c_clamp_s8(q + p->output_offset, INT8_MIN, INT8_MAX);
  }
  return TVMD_OK;
}

int32_t tvmd_c_requantize_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_quantize_params_t* p = (const tvmd_c_quantize_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    const int32_t y = tvmd_multiply_by_quantized_multiplier((int32_t)input[i] + p->input_offset, p->multiplier,
                                                            p->shift);
    output[i] = tvmd_c_clamp_s8(y + p->output_offset, INT8_MIN, INT8_MAX);
  }
  return TVMD_OK;
}

int32_t tvmd_c_dequantize_s8_f32(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_dequantize_params_t* p = (const tvmd_c_dequantize_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  float* output = (float*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) output[i] = p->scale * (float)((int32_t)input[i] - p->zero_point);
  return TVMD_OK;
}
