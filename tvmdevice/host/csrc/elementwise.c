/*
 * ADD, SUB and MUL, int8, with broadcasting: TFLM's reference_integer_ops
 * AddFunc, reference_ops SubElementwise (BroadcastQuantSubSlow) and
 * MulElementwise.  The output is walked in order; each input's element
 * comes from its strides (0 along a broadcast dimension), shapes
 * right-aligned to TVMD_C_MAX_DIMS dimensions.
 *
 * ADD: each input plus its offset is shifted left by left_shift (20),
 * rescaled by its own multiplier, the two are summed and the sum rescaled to
 * the output; SUB the same with the difference (wrapping in int32).  MUL:
 * the product of the offset inputs is rescaled.
 */
#include "internal.h"

static inline int8_t add_one(const tvmd_c_elementwise_params_t* p, int8_t a, int8_t b) {
  const int32_t shifted_a = (int32_t)((uint32_t)((int32_t)a + p->input1_offset) << p->left_shift);
  const int32_t shifted_b = (int32_t)((uint32_t)((int32_t)b + p->input2_offset) << p->left_shift);
  const int32_t scaled_a = tvmd_multiply_by_quantized_multiplier(shifted_a, p->input1_multiplier, p->input1_shift);
  const int32_t scaled_b = tvmd_multiply_by_quantized_multiplier(shifted_b, p->input2_multiplier, p->input2_shift);
  const int32_t y = tvmd_multiply_by_quantized_multiplier(scaled_a + scaled_b, p->output_multiplier,
                                                          p->output_shift);
  return tvmd_c_clamp_s8(y + p->output_offset, p->act_min, p->act_max);
}

static inline int8_t sub_one(const tvmd_c_elementwise_params_t* p, int8_t a, int8_t b) {
  const int32_t shifted_a = tvmd_wrap_i32((uint32_t)((int32_t)a + p->input1_offset) << p->left_shift);
  const int32_t shifted_b = tvmd_wrap_i32((uint32_t)((int32_t)b + p->input2_offset) << p->left_shift);
  const int32_t scaled_a = tvmd_multiply_by_quantized_multiplier(shifted_a, p->input1_multiplier, p->input1_shift);
  const int32_t scaled_b = tvmd_multiply_by_quantized_multiplier(shifted_b, p->input2_multiplier, p->input2_shift);
  const int32_t y = tvmd_multiply_by_quantized_multiplier(tvmd_sub_wrap_i32(scaled_a, scaled_b), p->output_multiplier,
                                                          p->output_shift);
  return tvmd_c_clamp_s8(y + p->output_offset, p->act_min, p->act_max);
}

static inline int8_t mul_one(const tvmd_c_elementwise_params_t* p, int8_t a, int8_t b) {
  const int32_t product = ((int32_t)a + p->input1_offset) * ((int32_t)b + p->input2_offset);
  const int32_t y = tvmd_multiply_by_quantized_multiplier(product, p->output_multiplier, p->output_shift);
  return tvmd_c_clamp_s8(y + p->output_offset, p->act_min, p->act_max);
}

typedef int8_t (*elementwise_fn)(const tvmd_c_elementwise_params_t* p, int8_t a, int8_t b);

/* The loop they share: the innermost dimension is a row walked with the
 * inputs' strides; the outer dimensions advance like an odometer.  Static
 * with a constant function argument, so the compiler specializes it. */
static void broadcast_loop(const tvmd_c_elementwise_params_t* p, void* const* buffers, elementwise_fn one) {
  const int8_t* in1 = (const int8_t*)buffers[0];
  const int8_t* in2 = (const int8_t*)buffers[1];
  int8_t* out = (int8_t*)buffers[2];
  const int last = TVMD_C_MAX_DIMS - 1;
  const int32_t row = p->out_shape[last];
  const int32_t s1 = p->in1_strides[last], s2 = p->in2_strides[last];
  int32_t index[TVMD_C_MAX_DIMS] = {0};
  size_t o1 = 0, o2 = 0, o = 0;
  while (o < (size_t)p->size) {
    for (int32_t j = 0; j < row; ++j) {
      out[o + (size_t)j] = one(p, in1[o1 + (size_t)j * (size_t)s1], in2[o2 + (size_t)j * (size_t)s2]);
    }
    o += (size_t)row;
    tvmd_c_broadcast_next_row(p, index, &o1, &o2);
  }
}

int32_t tvmd_c_add_s8(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  broadcast_loop((const tvmd_c_elementwise_params_t*)params, buffers, add_one);
  return TVMD_OK;
}

int32_t tvmd_c_mul_s8(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  broadcast_loop((const tvmd_c_elementwise_params_t*)params, buffers, mul_one);
  return TVMD_OK;
}

int32_t tvmd_c_sub_s8(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  broadcast_loop((const tvmd_c_elementwise_params_t*)params, buffers, sub_one);
  return TVMD_OK;
}
