/*
 * SOFTMAX with an int16 output: TFLM's reference_ops::Softmax for int8 input
 * and int16 output (the gemmlowp path of softmax.c, tvmd_c_softmax_gemmlowp,
 * shifted down to 16 bits and offset by -32768), and reference_ops::SoftmaxInt16 (exp and 1/(1+x)
 * from interpolated 513-entry tables; the row's exps are kept in the output
 * while their sum is formed, as TFLM does).
 */
#include "internal.h"

int32_t tvmd_c_softmax_s8_s16(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  return tvmd_c_softmax_gemmlowp((const tvmd_c_softmax_params_t*)params, (const int8_t*)buffers[0], buffers[1], 16);
}

int32_t tvmd_c_softmax_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_softmax_s16_params_t* p = (const tvmd_c_softmax_s16_params_t*)params;
  const int16_t* input = (const int16_t*)buffers[0];
  int16_t* output = (int16_t*)buffers[1];
  (void)resource_handle;
  for (int32_t r = 0; r < p->rows; ++r) {
    const int16_t* x = input + (size_t)r * (size_t)p->depth;
    int16_t* y = output + (size_t)r * (size_t)p->depth;
    int32_t max_in_row = INT16_MIN;
    for (int32_t c = 0; c < p->depth; ++c) max_in_row = tvmd_c_max(max_in_row, x[c]);
    int32_t sum_of_exps = 0; /* Q16.15; the depth limit keeps it below 2^31 */
    for (int32_t c = 0; c < p->depth; ++c) {
      const int32_t diff = (int32_t)x[c] - max_in_row;
      const int32_t scaled = tvmd_multiply_by_quantized_multiplier(diff, p->input_multiplier, p->input_left_shift);
      const int32_t centered = tvmd_clamp_i32(scaled + 32767, INT16_MIN, INT16_MAX);
      y[c] = tvmd_lut_lookup_s16((int16_t)centered, p->exp_lut);
      sum_of_exps += y[c];
    }
    const int headroom_plus_one = tvmd_count_leading_zeros_u32((uint32_t)sum_of_exps);
    if (headroom_plus_one < 1 || headroom_plus_one > 30) return TVMD_ERR_KERNEL; /* unreachable: exp(0) is in every row */
    const int32_t shifted_sum = (int32_t)(((int64_t)sum_of_exps * ((int64_t)1 << (headroom_plus_one - 1)) +
                                           (1 << 13)) / (1 << 14));
    const int32_t centered_sum = tvmd_clamp_i32(shifted_sum - ((1 << 15) + (1 << 16)), INT16_MIN, INT16_MAX);
    const int32_t reciprocal = tvmd_lut_lookup_s16((int16_t)centered_sum, p->one_over_one_plus_x_lut);
    const int right_shift = 31 - headroom_plus_one;
    const int64_t round = (int64_t)1 << (right_shift - 1);
    for (int32_t c = 0; c < p->depth; ++c) {
      const int64_t scaled = tvmd_floor_shift_i64((int64_t)y[c] * reciprocal + round, right_shift);
      y[c] = (int16_t)(scaled < 0 ? 0 : (scaled > INT16_MAX ? INT16_MAX : scaled));
    }
  }
  return TVMD_OK;
}
