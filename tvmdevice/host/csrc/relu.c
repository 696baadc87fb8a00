/*
 * RELU, RELU6, LEAKY_RELU and HARD_SWISH, int8, element-wise:
 * TFLM's ReluQuantized, Relu6Quantized, QuantizeLeakyRelu and
 * reference_ops::HardSwish (whose int16 fixed-point steps are gemmlowp's).
 */
#include "internal.h"

int32_t tvmd_c_relu_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_relu_params_t* p = (const tvmd_c_relu_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    const int32_t y = p->output_offset + tvmd_multiply_by_quantized_multiplier((int32_t)input[i] - p->input_offset,
                                                                               p->output_multiplier, p->output_shift);
    output[i] = tvmd_c_clamp_s8(y, p->act_min, p->act_max);
  }
  return TVMD_OK;
}

int32_t tvmd_c_relu6_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_relu6_params_t* p = (const tvmd_c_relu6_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    const int32_t x = input[i];
    output[i] = (int8_t)(x > p->six ? p->six : (x < p->zero ? p->zero : x));
  }
  return TVMD_OK;
}

int32_t tvmd_c_leaky_relu_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_leaky_relu_params_t* p = (const tvmd_c_leaky_relu_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  /* A negative alpha multiplies by its magnitude and negates the result. */
  const int negative_alpha = p->output_multiplier_alpha < 0;
  const int32_t alpha_multiplier = negative_alpha ? -p->output_multiplier_alpha : p->output_multiplier_alpha;
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    const int32_t x = (int32_t)input[i] - p->input_offset;
    int32_t y = p->output_offset;
    if (x >= 0) {
      y += tvmd_multiply_by_quantized_multiplier(x, p->output_multiplier_identity, p->output_shift_identity);
    } else {
      const int32_t scaled = tvmd_multiply_by_quantized_multiplier(x, alpha_multiplier, p->output_shift_alpha);
      y += negative_alpha ? -scaled : scaled;
    }
    output[i] = tvmd_c_clamp_s8(y, INT8_MIN, INT8_MAX);
  }
  return TVMD_OK;
}

/* gemmlowp's SaturatingRoundingDoublingHighMul on int16. */
static int32_t srdhm_16(int32_t a, int32_t b) {
  if (a == INT16_MIN && b == INT16_MIN) return INT16_MAX;
  const int32_t ab = a * b;
  return (ab + (ab >= 0 ? (1 << 14) : 1 - (1 << 14))) / (1 << 15); /* C division truncates */
}

/* SaturatingDoublingHighMul: as above, truncating instead of rounding. */
static int32_t sdhm_16(int32_t a, int32_t b) {
  if (a == INT16_MIN && b == INT16_MIN) return INT16_MAX;
  return (a * b) / (1 << 15);
}

static int32_t saturating_left_shift_16(int32_t value, int amount) {
  const int64_t result = (int64_t)value * ((int64_t)1 << amount);
  return (int32_t)(result > INT16_MAX ? INT16_MAX : (result < INT16_MIN ? INT16_MIN : result));
}

int32_t tvmd_c_hard_swish_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_hard_swish_params_t* p = (const tvmd_c_hard_swish_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  const int32_t relu_exponent = p->reluish_multiplier_exponent;
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    /* |input - zero point| <= 255, so x * 128 fits int16 */
    const int32_t hires = ((int32_t)input[i] - p->input_zero_point) * 128;
    const int32_t preshift_output = srdhm_16(hires, p->output_multiplier_fixedpoint_int16);
    int32_t reluish = hires;
    if (relu_exponent > 0) reluish = saturating_left_shift_16(reluish, relu_exponent - 1);
    reluish = srdhm_16(reluish, p->reluish_multiplier_fixedpoint_int16);
    if (relu_exponent > 0) reluish = saturating_left_shift_16(reluish, 1);
    if (relu_exponent < 0) reluish = tvmd_rounding_divide_by_pot(reluish, -relu_exponent);
    reluish = (reluish + (1 << 15)) >> 1; /* [-1, 1] -> [0, 1] in Q15 (a non-negative shift) */
    const int32_t y = tvmd_rounding_divide_by_pot(sdhm_16(reluish, preshift_output), -p->output_multiplier_exponent);
    output[i] = tvmd_c_clamp_s8(y + p->output_zero_point, INT8_MIN, INT8_MAX);
  }
  return TVMD_OK;
}
