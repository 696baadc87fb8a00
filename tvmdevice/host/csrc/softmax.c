/*
 * SOFTMAX, int8 -> int8 along the last axis: TFLM's reference_ops::Softmax
 * for int8 (the gemmlowp path; TFLM's exp tables serve int16 only).  Per row,
 * differences to the row maximum at or above diff_min are rescaled to Q5.26
 * and exponentiated; their sum (Q12.19) is inverted once, and each exp times
 * that reciprocal is shifted down to 8 bits.  The rest give -128.
 */
#include "fixedpoint.h"

enum { kScaledDiffIntegerBits = 5, kAccumulationIntegerBits = 12 };

static inline int32_t scaled_exp(const tvmd_c_softmax_params_t* p, int32_t diff) {
  /* MultiplyByQuantizedMultiplierGreaterThanOne: diff_min keeps the shift in range. */
  const int32_t rescaled = tvmd_fp_mul((int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
  return tvmd_fp_exp_on_negative_values(rescaled, kScaledDiffIntegerBits);
}

int32_t tvmd_c_softmax_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_softmax_params_t* p = (const tvmd_c_softmax_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  (void)resource_handle;
  for (int32_t r = 0; r < p->rows; ++r) {
    const int8_t* x = input + (size_t)r * (size_t)p->depth;
    int8_t* y = output + (size_t)r * (size_t)p->depth;
    int32_t max_in_row = INT8_MIN;
    for (int32_t c = 0; c < p->depth; ++c) max_in_row = tvmd_c_max(max_in_row, x[c]);
    int32_t sum_of_exps = 0;
    for (int32_t c = 0; c < p->depth; ++c) {
      const int32_t diff = (int32_t)x[c] - max_in_row;
      if (diff >= p->diff_min) {
        sum_of_exps = tvmd_c_add_wrap(sum_of_exps,
                                      tvmd_rounding_divide_by_pot(scaled_exp(p, diff), kAccumulationIntegerBits));
      }
    }
    int num_bits_over_unit;
    const int32_t shifted_scale = tvmd_fp_get_reciprocal(sum_of_exps, kAccumulationIntegerBits, &num_bits_over_unit);
    const int exponent = num_bits_over_unit + 31 - 8;
    /* TFLM requires 0 <= exponent <= 31 and aborts otherwise: only rows of
     * more than 511 near-maximal logits get there. */
    if (exponent < 0 || exponent > 31) return TVMD_ERR_KERNEL;
    for (int32_t c = 0; c < p->depth; ++c) {
      const int32_t diff = (int32_t)x[c] - max_in_row;
      if (diff >= p->diff_min) {
        const int32_t unsat = tvmd_rounding_divide_by_pot(tvmd_fp_mul(shifted_scale, scaled_exp(p, diff)), exponent);
        y[c] = tvmd_c_clamp_s8(unsat - 128, INT8_MIN, INT8_MAX);
      } else {
        y[c] = INT8_MIN;
      }
    }
  }
  return TVMD_OK;
}
