/*
 * ADD and MUL on int16, with broadcasting (CMSIS-NN's arm_elementwise_add_s16
 * / arm_elementwise_mul_s16; TFLM's int16 AddElementwise / BroadcastAdd6DSlow
 * and reference_integer_ops MulElementwise / BroadcastMul4DSlow, whose values
 * the tests check).  The formulas are the int8 kernels' (elementwise.c) with
 * the int16 left shift (15, in the params) and the int16 clamp; the int32
 * intermediate steps wrap through uint32 as the reference's do.
 *
 * On a Cortex-M (mprofile.h) the walk goes a run of the innermost dimension
 * at a time through the int8 kernels' Helium and DSP runs (elementwise_m.h),
 * here on int16 elements; plain C (Cortex-M0/M3, the host) element by
 * element, below.
 */
#include "broadcast.h"
#include "elementwise_m.h"
#include "s16.h"

size_t tvmd_cmsis_add_s16_get_buffer_size(const tvmd_cmsis_elementwise_params_t* p) {
  (void)p;
  return 0;
}

size_t tvmd_cmsis_mul_s16_get_buffer_size(const tvmd_cmsis_elementwise_params_t* p) {
  (void)p;
  return 0;
}

static inline int16_t clamp_s16(int32_t v, const tvmd_cmsis_elementwise_params_t* p) {
  return (int16_t)tvmd_cmsis_min(tvmd_cmsis_max(v, p->act_min), p->act_max);
}

static inline int32_t scaled(int32_t x, int32_t offset, int32_t left_shift, int32_t multiplier, int32_t shift) {
  const int32_t shifted = tvmd_wrap_i32((uint32_t)(x + offset) << left_shift);
  return tvmd_multiply_by_quantized_multiplier(shifted, multiplier, shift);
}

static inline int16_t add_one(int16_t x, int16_t y, const tvmd_cmsis_elementwise_params_t* p) {
  const int32_t sa = scaled(x, p->input1_offset, p->left_shift, p->input1_multiplier, p->input1_shift);
  const int32_t sb = scaled(y, p->input2_offset, p->left_shift, p->input2_multiplier, p->input2_shift);
  const int32_t raw = tvmd_multiply_by_quantized_multiplier(tvmd_cmsis_wrap_add(sa, sb), p->output_multiplier,
                                                            p->output_shift);
  return clamp_s16(raw + p->output_offset, p);
}

static inline int16_t mul_one(int16_t x, int16_t y, const tvmd_cmsis_elementwise_params_t* p) {
  const int32_t product = tvmd_wrap_i32((uint32_t)(x + p->input1_offset) * (uint32_t)(y + p->input2_offset));
  const int32_t raw = tvmd_multiply_by_quantized_multiplier(product, p->output_multiplier, p->output_shift);
  return clamp_s16(raw + p->output_offset, p);
}

#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
TVMD_CMSIS_EW_ROWS(2) /* add_row, mul_row: elementwise_m.h */
#endif

static int32_t start(const tvmd_cmsis_elementwise_params_t* p, uint32_t kind, void* const* buffers,
                     void* resource_handle) {
  if (p == NULL || p->kind != kind || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (buffers[0] == NULL || buffers[1] == NULL || buffers[2] == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (p->ndim < 1 || p->ndim > TVMD_CMSIS_MAX_DIMS) return TVMD_ERR_INVALID_ARGUMENT;
  return tvmd_cmsis_enter(resource_handle, kind, 0);
}

int32_t tvmd_cmsis_add_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_elementwise_params_t* p = (const tvmd_cmsis_elementwise_params_t*)params;
  const int32_t status = start(p, TVMD_CMSIS_KIND_ADD_S16, buffers, resource_handle);
  if (status != TVMD_OK) return status;
  const int16_t* in1 = (const int16_t*)buffers[0];
  const int16_t* in2 = (const int16_t*)buffers[1];
  int16_t* out = (int16_t*)buffers[2];
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
  TVMD_CMSIS_BROADCAST_ROWS(add_row);
#else
  TVMD_CMSIS_BROADCAST_LOOP(add_one);
#endif
  return TVMD_OK;
}

int32_t tvmd_cmsis_mul_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_elementwise_params_t* p = (const tvmd_cmsis_elementwise_params_t*)params;
  const int32_t status = start(p, TVMD_CMSIS_KIND_MUL_S16, buffers, resource_handle);
  if (status != TVMD_OK) return status;
  const int16_t* in1 = (const int16_t*)buffers[0];
  const int16_t* in2 = (const int16_t*)buffers[1];
  int16_t* out = (int16_t*)buffers[2];
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
  TVMD_CMSIS_BROADCAST_ROWS(mul_row);
#else
  TVMD_CMSIS_BROADCAST_LOOP(mul_one);
#endif
  return TVMD_OK;
}
