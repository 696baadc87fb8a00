/*
 * LOGISTIC and TANH on int16: TFLM's reference_integer_ops::Logistic and
 * Tanh for int16.  The input is rescaled to 3 * 4096 steps per unit (by
 * 3 << input_left_shift for a power-of-two input scale, else by
 * input_multiplier and a rounding right shift by input_left_shift), and the
 * result interpolated between entries of TFLM's table of sigmoid(i / 24) in
 * unsigned Q0.16 (tanh(x) = 2 sigmoid(2x) - 1 reads the same table at twice
 * the step).  Outputs are Q0.15.  The table and its interpolation are
 * tvmdevice/fixedpoint.h's, shared with the LSTM kernels.
 */
#include "internal.h"

/* The input in 3 * 4096 steps per unit: a power-of-two input scale is the
 * exact multiplier 3 << left_shift (input_multiplier 0), else
 * (x * multiplier + round) >> left_shift. */
static inline int32_t rescale(int32_t x, int32_t multiplier, int32_t left_shift) {
  if (multiplier == 0) return tvmd_rescale_s16(x, 3 << left_shift, 0);
  return tvmd_rescale_s16(x, multiplier, left_shift);
}

int32_t tvmd_c_logistic_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_activation_s16_params_t* p = (const tvmd_c_activation_s16_params_t*)params;
  const int16_t* input = (const int16_t*)buffers[0];
  int16_t* output = (int16_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    output[i] = tvmd_logistic_s16(rescale(input[i], p->input_multiplier, p->input_left_shift));
  }
  return TVMD_OK;
}

int32_t tvmd_c_tanh_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_activation_s16_params_t* p = (const tvmd_c_activation_s16_params_t*)params;
  const int16_t* input = (const int16_t*)buffers[0];
  int16_t* output = (int16_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    output[i] = tvmd_tanh_s16(rescale(input[i], p->input_multiplier, p->input_left_shift));
  }
  return TVMD_OK;
}
