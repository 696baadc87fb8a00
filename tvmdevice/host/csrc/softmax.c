/*
 * SOFTMAX, int8 -> int8 along the last axis: TFLM's reference_ops::Softmax
 * for int8 (the gemmlowp path; TFLM's exp tables serve int16 only).  Per row,
 * differences to the row maximum at or above diff_min are rescaled to Q5.26
 * and exponentiated; their sum (Q12.19) is inverted once, and each exp times
 * that reciprocal is shifted down to 8 bits.  The rest give -128.
 */
#include "internal.h"

enum { kScaledDiffIntegerBits = 5, kAccumulationIntegerBits = 12 };

static inline int32_t scaled_exp(const tvmd_c_softmax_params_t* p, int32_t diff) {
  /* MultiplyByQuantizedMultiplierGreaterThanOne: diff_min keeps the shift in range. */
  const int32_t rescaled = tvmd_fp_mul((int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
  return tvmd_fp_exp_on_negative_values(rescaled, kScaledDiffIntegerBits);
}

/* The gemmlowp path for rows of int8 input, written as out_bits (8 or 16) signed outputs: each
 * exp times the row's reciprocal is shifted down to out_bits and offset by -2^(out_bits - 1)
 * (TFLM's reference_ops::Softmax for int8 input and an int8 or int16 output). */
int32_t tvmd_c_softmax_gemmlowp(const tvmd_c_softmax_params_t* p, const int8_t* input, void* output, int out_bits) {
  const int32_t lowest = out_bits == 8 ? INT8_MIN : INT16_MIN, highest = out_bits == 8 ? INT8_MAX : INT16_MAX;
  for (int32_t r = 0; r < p->rows; ++r) {
    const int8_t* x = input + (size_t)r * (size_t)p->depth;
    const size_t row = (size_t)r * (size_t)p->depth;
    int32_t max_in_row = INT8_MIN;
    for (int32_t c = 0; c < p->depth; ++c) max_in_row = tvmd_c_max(max_in_row, x[c]);
    int32_t sum_of_exps = 0;
    for (int32_t c = 0; c < p->depth; ++c) {
      const int32_t diff = (int32_t)x[c] - max_in_row;
      if (diff >= p->diff_min) {
        sum_of_exps = tvmd_add_wrap_i32(sum_of_exps,
                                      tvmd_rounding_divide_by_pot(scaled_exp(p, diff), kAccumulationIntegerBits));
      }
    }
    int num_bits_over_unit;
    const int32_t shifted_scale = tvmd_fp_get_reciprocal(sum_of_exps, kAccumulationIntegerBits, &num_bits_over_unit);
    const int exponent = num_bits_over_unit + 31 - out_bits;
    /* TFLM requires 0 <= exponent <= 31 and aborts otherwise: only rows of
     * more than 511 near-maximal logits get there. */
    if (exponent < 0 || exponent > 31) return TVMD_ERR_KERNEL;
    for (int32_t c = 0; c < p->depth; ++c) {
      const int32_t diff = (int32_t)x[c] - max_in_row;
      int32_t value = lowest;
      if (diff >= p->diff_min) {
        const int32_t unsat = tvmd_rounding_divide_by_pot(tvmd_fp_mul(shifted_scale, scaled_exp(p, diff)), exponent);
        value = tvmd_clamp_i32(unsat + lowest, lowest, highest);
      }
      if (out_bits == 8) {
        ((int8_t*)output)[row + (size_t)c] = (int8_t)value;
      } else {
        ((int16_t*)output)[row + (size_t)c] = (int16_t)value;
      }
    }
  }
  return TVMD_OK;
}

int32_t tvmd_c_softmax_s8(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  return tvmd_c_softmax_gemmlowp((const tvmd_c_softmax_params_t*)params, (const int8_t*)buffers[0], buffers[1], 8);
}
