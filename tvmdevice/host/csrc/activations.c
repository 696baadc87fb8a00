/*
 * LOGISTIC and TANH, int8: TFLM's reference_integer_ops::Logistic and Tanh
 * (the integer path).  The input minus its zero point saturates the output
 * at or past input_range_radius; otherwise it is rescaled to Q4.27, run
 * through gemmlowp's fixed-point logistic / tanh and shifted down to 8 bits
 * (logistic: zero point -128).
 */
#include "internal.h"

enum { kInputIntegerBits = 4 };

static inline int8_t saturated(int32_t x, int32_t radius) { return x <= -radius ? INT8_MIN : INT8_MAX; }

int32_t tvmd_c_logistic_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_activation_params_t* p = (const tvmd_c_activation_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    const int32_t x = (int32_t)input[i] - p->input_zero_point;
    if (x <= -p->input_range_radius || x >= p->input_range_radius) {
      output[i] = saturated(x, p->input_range_radius);
      continue;
    }
    const int32_t x_q4 = tvmd_multiply_by_quantized_multiplier(x, p->input_multiplier, p->input_left_shift);
    const int32_t y = tvmd_rounding_divide_by_pot(tvmd_fp_logistic(x_q4, kInputIntegerBits), 31 - 8);
    output[i] = tvmd_c_clamp_s8(y - 128, INT8_MIN, INT8_MAX);
  }
  return TVMD_OK;
}

int32_t tvmd_c_tanh_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_activation_params_t* p = (const tvmd_c_activation_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    const int32_t x = (int32_t)input[i] - p->input_zero_point;
    if (x <= -p->input_range_radius || x >= p->input_range_radius) {
      output[i] = saturated(x, p->input_range_radius);
      continue;
    }
    const int32_t x_q4 = tvmd_multiply_by_quantized_multiplier(x, p->input_multiplier, p->input_left_shift);
    const int32_t y = tvmd_rounding_divide_by_pot(tvmd_fp_tanh(x_q4, kInputIntegerBits), 31 - 7);
    output[i] = tvmd_c_clamp_s8(y, INT8_MIN, INT8_MAX);
  }
  return TVMD_OK;
}
