/*
 * SOFTMAX with an int16 output: TFLM's reference_ops::Softmax for int8 input
 * and int16 output (the gemmlowp path of softmax.c, tvmd_c_softmax_gemmlowp,
 * shifted down to 16 bits and offset by -32768), and reference_ops::SoftmaxInt16 (exp and 1/(1+x)
 * from interpolated 513-entry tables; the row's exps are kept in the output
 * while their sum is formed, as TFLM does).
 */
#include "fixedpoint.h"
#include "wide.h"

int32_t tvmd_c_softmax_s8_s16(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  return tvmd_c_softmax_gemmlowp((const tvmd_c_softmax_params_t*)params, (const int8_t*)buffers[0], buffers[1], 16);
}

/* floor(x / 2^n) for n < 32, defined for negative x. */
static inline int32_t floor_shift(int32_t x, int n) { return x >= 0 ? x >> n : -1 - ((-1 - x) >> n); }

/* TFLM's LUTLookup: 512 intervals of 128 inputs, interpolated in Q0.7. */
static inline int16_t lut_lookup(int16_t value, const int16_t* lut) {
  const int32_t index = ((int32_t)value + 32768) >> 7; /* 256 + floor(value / 128) */
  const int32_t offset = (int32_t)value & 0x7f;
  const int32_t base = lut[index];
  const int32_t slope = (int32_t)lut[index + 1] - base;
  return (int16_t)(base + floor_shift(slope * offset + 64, 7));
}

static inline int count_leading_zeros(uint32_t u) {
  int n = 0;
  while (n < 32 && (u & (0x80000000u >> n)) == 0) ++n;
  return n;
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
      y[c] = lut_lookup((int16_t)centered, p->exp_lut);
      sum_of_exps += y[c];
    }
    const int headroom_plus_one = count_leading_zeros((uint32_t)sum_of_exps);
    if (headroom_plus_one < 1 || headroom_plus_one > 30) return TVMD_ERR_KERNEL; /* unreachable: exp(0) is in every row */
    const int32_t shifted_sum = (int32_t)(((int64_t)sum_of_exps * ((int64_t)1 << (headroom_plus_one - 1)) +
                                           (1 << 13)) / (1 << 14));
    const int32_t centered_sum = tvmd_clamp_i32(shifted_sum - ((1 << 15) + (1 << 16)), INT16_MIN, INT16_MAX);
    const int32_t reciprocal = lut_lookup((int16_t)centered_sum, p->one_over_one_plus_x_lut);
    const int right_shift = 31 - headroom_plus_one;
    const int64_t round = (int64_t)1 << (right_shift - 1);
    for (int32_t c = 0; c < p->depth; ++c) {
      const int64_t scaled = tvmd_c_floor_shift64((int64_t)y[c] * reciprocal + round, right_shift);
      y[c] = (int16_t)(scaled < 0 ? 0 : (scaled > INT16_MAX ? INT16_MAX : scaled));
    }
  }
  return TVMD_OK;
}
