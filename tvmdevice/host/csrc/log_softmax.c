/*
 * LOG_SOFTMAX, int8 -> int8 along the last axis: TFLM's
 * reference_ops::LogSoftmaxQuantized.  Per row: differences to the row
 * maximum, rescaled to Q5.26, are exponentiated (gemmlowp's
 * exp_on_negative_values) and summed in Q12.19; the sum's logarithm in Q5.26
 * (TFLM's log_x_for_x_greater_than_or_equal_to_1, below) is subtracted from
 * each rescaled difference and the result shifted to the output's Q4.3
 * (scale 16/256, zero point 127).  Differences at or below the adjusted
 * minimum output -128.
 */
#include "internal.h"

enum { kInputIntegerBits = 5, kAccumulationIntegerBits = 12, kOutputIntegerBits = 4, kLogAccumBits = 6 };

/* log(x) for x >= 1 given in Q12.19; the result in Q5.26 (TFLM's
 * log_x_for_x_greater_than_or_equal_to_1_impl<5, 12>, accumulating with 6
 * integer bits).  Products are gemmlowp's rounding doubling high multiply,
 * sums wrap. */
static int32_t log_x_q12_to_q5(int32_t x) {
  const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301, sqrt_half = 1518500250;
  const int32_t alpha_n = 117049297, alpha_d = 127690142, alpha_i = 1057819769, alpha_f = 638450708;
  const int32_t shifted_quarter = tvmd_rounding_divide_by_pot(536870912, kLogAccumBits); /* 1/4 in Q6 */
  /* x read as Q0.31; the power of two is found from its leading zeros. */
  const int z_a_headroom_plus_1 = tvmd_count_leading_zeros_u32((uint32_t)x);
  const int32_t r_a_tmp = tvmd_fp_mul_by_pot(x, z_a_headroom_plus_1 - 1);
  const int32_t r_a = tvmd_fp_mul_by_pot(tvmd_fp_mul(r_a_tmp, sqrt_half), 1);
  const int32_t z_a_pow_2_adj = tvmd_saturating_add_i32(
      tvmd_fp_mul_by_pot(kAccumulationIntegerBits - z_a_headroom_plus_1, 31 - kLogAccumBits), shifted_quarter);
  const int32_t z_b = tvmd_fp_mul(x, sqrt_half);
  const int z_b_headroom = tvmd_count_leading_zeros_u32((uint32_t)z_b) - 1;
  const int32_t r_b = tvmd_fp_mul_by_pot(x, z_b_headroom);
  const int32_t z_b_pow_2_adj = tvmd_saturating_sub_i32(
      tvmd_fp_mul_by_pot(kAccumulationIntegerBits - z_b_headroom, 31 - kLogAccumBits), shifted_quarter);
  const int32_t r = r_a < r_b ? r_a : r_b;
  const int32_t z_pow_2_adj = z_a_pow_2_adj > z_b_pow_2_adj ? z_a_pow_2_adj : z_b_pow_2_adj;

  const int32_t p = tvmd_fp_rounding_half_sum(r, sqrt_sqrt_half);
  int32_t q = tvmd_wrap_i32((uint32_t)r - (uint32_t)sqrt_sqrt_half);
  q = tvmd_add_wrap_i32(q, q);
  const int32_t common_sq = tvmd_fp_mul(q, q);
  const int32_t num = tvmd_add_wrap_i32(tvmd_fp_mul(q, r), tvmd_fp_mul(tvmd_fp_mul(q, common_sq), alpha_n));
  const int32_t denom_minus_one = tvmd_add_wrap_i32(
      tvmd_fp_mul(p, tvmd_add_wrap_i32(tvmd_add_wrap_i32(alpha_i, q), tvmd_fp_mul(alpha_d, common_sq))),
      tvmd_fp_mul(alpha_f, q));
  const int32_t recip_denom = tvmd_fp_one_over_one_plus_x(denom_minus_one);
  const int32_t num_scaled = tvmd_rounding_divide_by_pot(num, kLogAccumBits); /* Q0 -> Q6 */
  const int32_t sum = tvmd_add_wrap_i32(tvmd_fp_mul(z_pow_2_adj, log_2), tvmd_fp_mul(num_scaled, recip_denom));
  return tvmd_fp_mul_by_pot(sum, kLogAccumBits - kInputIntegerBits); /* Q6 -> Q5 */
}

int32_t tvmd_c_log_softmax_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_log_softmax_params_t* p = (const tvmd_c_log_softmax_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  const size_t depth = (size_t)p->depth;
  (void)resource_handle;
  for (int32_t row = 0; row < p->rows; ++row) {
    const int8_t* x = input + (size_t)row * depth;
    int8_t* y = output + (size_t)row * depth;
    int32_t max_in_row = INT8_MIN;
    for (size_t c = 0; c < depth; ++c) max_in_row = tvmd_c_max(max_in_row, x[c]);
    int32_t sum_of_exps = 0; /* Q12.19 */
    for (size_t c = 0; c < depth; ++c) {
      const int32_t diff = (int32_t)x[c] - max_in_row;
      if (diff >= p->diff_min) {
        const int32_t diff_q5 = tvmd_multiply_by_quantized_multiplier(diff, p->input_multiplier, p->input_left_shift);
        const int32_t e = tvmd_fp_exp_on_negative_values(diff_q5, kInputIntegerBits);
        sum_of_exps = tvmd_add_wrap_i32(sum_of_exps,
                                      tvmd_rounding_divide_by_pot(e, kAccumulationIntegerBits)); /* Q0 -> Q12 */
      }
    }
    const int32_t log_sum = log_x_q12_to_q5(sum_of_exps);
    const int32_t reversed = tvmd_multiply_by_quantized_multiplier(tvmd_wrap_i32((uint32_t)log_sum + 0x80000000u),
                                                                   p->reverse_scaling_divisor,
                                                                   -p->reverse_scaling_right_shift);
    const int32_t adjusted_diff_min = tvmd_c_max(p->diff_min - 1, reversed);
    for (size_t c = 0; c < depth; ++c) {
      const int32_t diff = (int32_t)x[c] - max_in_row;
      if (diff > adjusted_diff_min) {
        const int32_t diff_q5 = tvmd_multiply_by_quantized_multiplier(diff, p->input_multiplier, p->input_left_shift);
        const int32_t out = tvmd_rounding_divide_by_pot(tvmd_wrap_i32((uint32_t)diff_q5 - (uint32_t)log_sum),
                                                        31 - kInputIntegerBits - kOutputIntegerBits) + INT8_MAX;
        y[c] = tvmd_c_clamp_s8(out, INT8_MIN, INT8_MAX);
      } else {
        y[c] = INT8_MIN;
      }
    }
  }
  return TVMD_OK;
}
