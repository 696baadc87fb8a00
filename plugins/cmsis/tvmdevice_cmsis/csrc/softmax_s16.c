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
 *
 * Helium (MVE, mprofile.h) runs the int16 -> int16 rows four entries at a
 * time in int32 lanes (the last step tail-predicated), the maximum eight at a
 * time: the rescale is tvmd_cmsis_requantize_mve (proven equal in
 * mprofile.h), the table's two neighbours come from two gathers (VLDRH.S32
 * with shifted offsets; every index lies in the table as the value is clamped
 * first), and the last step's int64 product and rounding shift fit int32 (two
 * int16 values times each other plus at most 2^29 stay below 2^31), so it is
 * VMUL and a rounding VRSHL, floor((v + 2^(s-1)) / 2^s) like the plain path's.
 * The reciprocal of the sum stays scalar, once per row.  DSP and plain C run
 * the scalar loops.
 */
#include "mprofile.h"
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
#if TVMD_CMSIS_MVE
    int32_t max_in_row = INT16_MIN;
    for (int32_t c = 0; c < p->depth; c += 8) {
      const mve_pred16_t t = vctp16q((uint32_t)(p->depth - c));
      max_in_row = vmaxvq_p_s16((int16_t)max_in_row, vldrhq_z_s16(x + c, t), t);
    }
    int32_t sum = 0; /* Q16.15; the depth bound (checked at prepare) keeps it below 2^31 */
    const int32x4_t multiplier = vdupq_n_s32(p->input_multiplier), shift = vdupq_n_s32(p->input_left_shift);
    for (int32_t c = 0; c < p->depth; c += 4) {
      const mve_pred16_t t = vctp32q((uint32_t)(p->depth - c));
      const int32x4_t diff = vsubq_n_s32(vldrhq_z_s32(x + c, t), max_in_row);
      int32x4_t centered = vaddq_n_s32(tvmd_cmsis_requantize_mve(diff, multiplier, shift), 32767);
      centered = vminq_s32(vmaxq_s32(centered, vdupq_n_s32(INT16_MIN)), vdupq_n_s32(INT16_MAX));
      /* tvmd_lut_lookup_s16(): 512 intervals of 128 inputs, linear in between. */
      const uint32x4_t index = vreinterpretq_u32_s32(vshrq_n_s32(vaddq_n_s32(centered, 32768), 7));
      const int32x4_t fraction = vandq_s32(centered, vdupq_n_s32(0x7f));
      const int32x4_t base = vldrhq_gather_shifted_offset_s32(p->exp_lut, index);
      const int32x4_t next = vldrhq_gather_shifted_offset_s32(p->exp_lut, vaddq_n_u32(index, 1));
      const int32x4_t e = vaddq_s32(base, vshrq_n_s32(vaddq_n_s32(vmulq_s32(vsubq_s32(next, base), fraction), 64), 7));
      vstrhq_p_s32(y + c, e, t);
      sum = vaddvaq_p_s32(sum, e, t);
    }
#else
    int32_t max_in_row = INT16_MIN;
    for (int32_t c = 0; c < p->depth; ++c) max_in_row = tvmd_cmsis_max(max_in_row, x[c]);
    int32_t sum = 0; /* Q16.15; the depth bound (checked at prepare) keeps it below 2^31 */
    for (int32_t c = 0; c < p->depth; ++c) {
      const int32_t diff = (int32_t)x[c] - max_in_row;
      const int32_t scaled = tvmd_multiply_by_quantized_multiplier(diff, p->input_multiplier, p->input_left_shift);
      const int32_t centered = tvmd_cmsis_min(tvmd_cmsis_max(scaled + 32767, INT16_MIN), INT16_MAX);
      y[c] = tvmd_lut_lookup_s16((int16_t)centered, p->exp_lut);
      sum += y[c];
    }
#endif
    const int headroom_plus_one = tvmd_count_leading_zeros_u32((uint32_t)sum);
    if (headroom_plus_one < 1 || headroom_plus_one > 30) return TVMD_ERR_KERNEL; /* exp(0) is in every row */
    /* The sum normalized to [1, 2) in Q1.14, centred to int16 for the table. */
    const int32_t shifted = (int32_t)(((int64_t)sum * ((int64_t)1 << (headroom_plus_one - 1)) + (1 << 13)) /
                                      (1 << 14));
    const int32_t centered = tvmd_cmsis_min(tvmd_cmsis_max(shifted - ((1 << 15) + (1 << 16)), INT16_MIN), INT16_MAX);
    const int32_t reciprocal = tvmd_lut_lookup_s16((int16_t)centered, p->one_over_one_plus_x_lut);
    const int right_shift = 31 - headroom_plus_one;
#if TVMD_CMSIS_MVE
    const int32x4_t down = vdupq_n_s32(-right_shift);
    for (int32_t c = 0; c < p->depth; c += 4) {
      const mve_pred16_t t = vctp32q((uint32_t)(p->depth - c));
      const int32x4_t v = vrshlq_s32(vmulq_n_s32(vldrhq_z_s32(y + c, t), reciprocal), down);
      vstrhq_p_s32(y + c, vminq_s32(vmaxq_s32(v, vdupq_n_s32(0)), vdupq_n_s32(INT16_MAX)), t);
    }
#else
    const int64_t half = (int64_t)1 << (right_shift - 1);
    for (int32_t c = 0; c < p->depth; ++c) {
      const int64_t v = tvmd_floor_shift_i64((int64_t)y[c] * reciprocal + half, right_shift);
      y[c] = (int16_t)(v < 0 ? 0 : (v > INT16_MAX ? INT16_MAX : v));
    }
#endif
  }
  return TVMD_OK;
}
