/*
 * SOFTMAX with an int16 output.
 *
 * int8 -> int16 (CMSIS-NN's arm_softmax_s8_s16): softmax.c's gemmlowp rows
 * shifted down to 16 bits and offset by -32768.
 *
 * int16 -> int16 (CMSIS-NN's arm_softmax_s16; TFLM's SoftmaxInt16, whose
 * values the tests check): each difference to the row maximum is rescaled so
 * that [-65535, 0] covers [-10, 0] and centred to int16, exp comes from a
 * 513-entry table interpolated in Q0.7, the row's exps are kept in the output
 * while their Q16.15 sum is formed, and the sum's reciprocal comes from the
 * 1 / (1 + x) table after normalizing the sum to [1, 2).  Both tables are
 * TFLM's LUTPopulate, computed once by the operator layer.
 */
#include "s16.h"

size_t tvmd_cmsis_softmax_s8_s16_get_buffer_size(const tvmd_cmsis_softmax_params_t* p) {
  (void)p;
  return 0;
}

size_t tvmd_cmsis_softmax_s16_get_buffer_size(const tvmd_cmsis_softmax_s16_params_t* p) {
  (void)p;
  return 0;
}

int32_t tvmd_cmsis_softmax_s8_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_softmax_params_t* p = (const tvmd_cmsis_softmax_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_SOFTMAX_S8_S16 || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (buffers[0] == NULL || buffers[1] == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int32_t status = tvmd_cmsis_enter(resource_handle, TVMD_CMSIS_KIND_SOFTMAX_S8_S16, 0);
  if (status != TVMD_OK) return status;
  tvmd_cmsis_softmax_gemmlowp(p, (const int8_t*)buffers[0], buffers[1], 16);
  return TVMD_OK;
}

/* floor(x / 2^n) for 0 <= n < 32. */
static inline int32_t floor_shift(int32_t x, int n) { return x >= 0 ? x >> n : -1 - ((-1 - x) >> n); }

/* The table's value at `value`: 512 intervals of 128 inputs, linear in between. */
static inline int16_t lookup(int16_t value, const int16_t* lut) {
  const int32_t index = ((int32_t)value + 32768) >> 7;
  const int32_t fraction = (int32_t)value & 0x7f;
  const int32_t base = lut[index];
  return (int16_t)(base + floor_shift(((int32_t)lut[index + 1] - base) * fraction + 64, 7));
}

static inline int leading_zeros(uint32_t u) {
  int n = 0;
  while (n < 32 && (u & (0x80000000u >> n)) == 0) ++n;
  return n;
}

int32_t tvmd_cmsis_softmax_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_softmax_s16_params_t* p = (const tvmd_cmsis_softmax_s16_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_SOFTMAX_S16 || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int16_t* input = (const int16_t*)buffers[0];
  int16_t* output = (int16_t*)buffers[1];
  if (input == NULL || output == NULL || p->exp_lut == NULL || p->one_over_one_plus_x_lut == NULL) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  const int32_t status = tvmd_cmsis_enter(resource_handle, TVMD_CMSIS_KIND_SOFTMAX_S16, 0);
  if (status != TVMD_OK) return status;
  for (int32_t r = 0; r < p->rows; ++r) {
    const int16_t* x = input + (size_t)r * (size_t)p->depth;
    int16_t* y = output + (size_t)r * (size_t)p->depth;
    int32_t max_in_row = INT16_MIN;
    for (int32_t c = 0; c < p->depth; ++c) max_in_row = tvmd_cmsis_max(max_in_row, x[c]);
    int32_t sum = 0; /* Q16.15; the depth bound (checked at prepare) keeps it below 2^31 */
    for (int32_t c = 0; c < p->depth; ++c) {
      const int32_t diff = (int32_t)x[c] - max_in_row;
      const int32_t scaled = tvmd_multiply_by_quantized_multiplier(diff, p->input_multiplier, p->input_left_shift);
      const int32_t centered = tvmd_cmsis_min(tvmd_cmsis_max(scaled + 32767, INT16_MIN), INT16_MAX);
      y[c] = lookup((int16_t)centered, p->exp_lut);
      sum += y[c];
    }
    const int headroom_plus_one = leading_zeros((uint32_t)sum);
    if (headroom_plus_one < 1 || headroom_plus_one > 30) return TVMD_ERR_KERNEL; /* exp(0) is in every row */
    /* The sum normalized to [1, 2) in Q1.14, centred to int16 for the table. */
    const int32_t shifted = (int32_t)(((int64_t)sum * ((int64_t)1 << (headroom_plus_one - 1)) + (1 << 13)) /
                                      (1 << 14));
    const int32_t centered = tvmd_cmsis_min(tvmd_cmsis_max(shifted - ((1 << 15) + (1 << 16)), INT16_MIN), INT16_MAX);
    const int32_t reciprocal = lookup((int16_t)centered, p->one_over_one_plus_x_lut);
    const int right_shift = 31 - headroom_plus_one;
    const int64_t half = (int64_t)1 << (right_shift - 1);
    for (int32_t c = 0; c < p->depth; ++c) {
      const int64_t v = tvmd_cmsis_floor_shift64((int64_t)y[c] * reciprocal + half, right_shift);
      y[c] = (int16_t)(v < 0 ? 0 : (v > INT16_MAX ? INT16_MAX : v));
    }
  }
  return TVMD_OK;
}
