/*
 * ADD, SUB and MUL on int16, with broadcasting: TFLM's reference
 * AddElementwise / BroadcastAdd6DSlow, SubElementwise / BroadcastQuantSubSlow
 * and reference_integer_ops::MulElementwise / BroadcastMul4DSlow on int16.
 * The formulas are the int8 kernels' (elementwise.c), with the int16 left
 * shift (15, in the params) and the int16 clamp; the output is walked in order, each input read through its
 * strides (0 along a broadcast dimension).
 */
#include "internal.h"

/* Input plus offset, shifted left by left_shift and rescaled (ADD/SUB's first step). */
static inline int32_t scaled(int32_t x, int32_t offset, int32_t left_shift, int32_t multiplier, int32_t shift) {
  const int32_t shifted = tvmd_wrap_i32((uint32_t)(x + offset) << left_shift);
  return tvmd_multiply_by_quantized_multiplier(shifted, multiplier, shift);
}

static inline int32_t add_sub(const tvmd_c_elementwise_params_t* p, int32_t a, int32_t b, int subtract) {
  const int32_t sa = scaled(a, p->input1_offset, p->left_shift, p->input1_multiplier, p->input1_shift);
  const int32_t sb = scaled(b, p->input2_offset, p->left_shift, p->input2_multiplier, p->input2_shift);
  const int32_t raw = subtract ? tvmd_sub_wrap_i32(sa, sb) : tvmd_add_wrap_i32(sa, sb);
  const int32_t y = tvmd_multiply_by_quantized_multiplier(raw, p->output_multiplier, p->output_shift);
  return tvmd_clamp_i32(y + p->output_offset, p->act_min, p->act_max);
}

static inline int32_t mul(const tvmd_c_elementwise_params_t* p, int32_t a, int32_t b) {
  const int32_t product = tvmd_wrap_i32((uint32_t)(a + p->input1_offset) * (uint32_t)(b + p->input2_offset));
  const int32_t y = tvmd_multiply_by_quantized_multiplier(product, p->output_multiplier, p->output_shift);
  return tvmd_clamp_i32(y + p->output_offset, p->act_min, p->act_max);
}

enum { kAdd, kSub, kMul };

static inline int32_t one(const tvmd_c_elementwise_params_t* p, int op, int32_t a, int32_t b) {
  return op == kMul ? mul(p, a, b) : add_sub(p, a, b, op == kSub);
}

/* The output walked in order: rows along the innermost dimension, the outer
 * dimensions advanced like an odometer. */
static void walk(const tvmd_c_elementwise_params_t* p, void* const* buffers, int op) {
  const int last = TVMD_C_MAX_DIMS - 1;
  const int32_t row = p->out_shape[last];
  const size_t s1 = (size_t)p->in1_strides[last], s2 = (size_t)p->in2_strides[last];
  int32_t index[TVMD_C_MAX_DIMS] = {0};
  size_t o1 = 0, o2 = 0, o = 0;
  while (o < (size_t)p->size) {
    for (int32_t j = 0; j < row; ++j) {
      const size_t i1 = o1 + (size_t)j * s1, i2 = o2 + (size_t)j * s2, k = o + (size_t)j;
      ((int16_t*)buffers[2])[k] =
          (int16_t)one(p, op, ((const int16_t*)buffers[0])[i1], ((const int16_t*)buffers[1])[i2]);
    }
    o += (size_t)row;
    tvmd_c_broadcast_next_row(p, index, &o1, &o2);
  }
}

int32_t tvmd_c_add_s16(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  walk((const tvmd_c_elementwise_params_t*)params, buffers, kAdd);
  return TVMD_OK;
}

int32_t tvmd_c_sub_s16(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  walk((const tvmd_c_elementwise_params_t*)params, buffers, kSub);
  return TVMD_OK;
}

int32_t tvmd_c_mul_s16(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  walk((const tvmd_c_elementwise_params_t*)params, buffers, kMul);
  return TVMD_OK;
}
