/*
 * ADD on the woofles vector unit, int8, with broadcasting up to rank 4;
 * bit-exact with TFLM's reference_integer_ops Add / BroadcastAdd: both
 * inputs are offset, shifted left by left_shift, rescaled to a common scale,
 * summed, rescaled to the output scale, offset and clamped.
 *
 * The address generator walks the output in row-major order with one stride
 * set per input (stride 0 repeats a broadcast dimension); the vector unit
 * retires mac_width elements per pass of its three-stage pipeline.
 */
#include "woofles_kernels.h"
#include "woofles_tile.h"

#define WOOFLES_ADD_STAGES 3u /* scale input1, scale input2, scale the sum */

/* The loops below walk exactly four dimensions: the generated params struct
 * (ADD_RANK in tvmdevice_woofles/params.py) must agree, or this fails to compile. */
typedef char woofles_add_rank_is_4[WOOFLES_COUNT(((const tvmd_woofles_add_params_t*)0)->out_shape) == 4 ? 1 : -1];

static inline int32_t woofles_add_one(const tvmd_woofles_add_params_t* p, int8_t a, int8_t b) {
  const int32_t x1 = (int32_t)((uint32_t)(a + p->input1_offset) << p->left_shift);
  const int32_t x2 = (int32_t)((uint32_t)(b + p->input2_offset) << p->left_shift);
  const int32_t s1 = tvmd_multiply_by_quantized_multiplier(x1, p->input1_multiplier, p->input1_shift);
  const int32_t s2 = tvmd_multiply_by_quantized_multiplier(x2, p->input2_multiplier, p->input2_shift);
  const int32_t sum = (int32_t)((uint32_t)s1 + (uint32_t)s2);
  const int32_t y = tvmd_multiply_by_quantized_multiplier(sum, p->output_multiplier, p->output_shift);
  return tvmd_clamp_i32((int32_t)((uint32_t)y + (uint32_t)p->output_offset), p->act_min, p->act_max);
}

int32_t tvmd_woofles_add_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_woofles_add_params_t* p = (const tvmd_woofles_add_params_t*)params;
  tvm_device_woofles_t* dev = (tvm_device_woofles_t*)resource_handle;
  if (p == NULL || buffers == NULL || dev == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  int32_t status = woofles_kernel_begin(dev);
  if (status != TVMD_OK) return status;
  uint64_t total = 1, last1 = 0, last2 = 0;
  for (int d = 0; d < 4; ++d) {
    if (p->out_shape[d] <= 0 || p->in1_strides[d] < 0 || p->in2_strides[d] < 0) return TVMD_ERR_INVALID_ARGUMENT;
    total *= (uint64_t)p->out_shape[d];
    last1 += (uint64_t)(p->out_shape[d] - 1) * (uint64_t)p->in1_strides[d];
    last2 += (uint64_t)(p->out_shape[d] - 1) * (uint64_t)p->in2_strides[d];
  }
  /* The last element each stride set reaches must lie inside its input. */
  if (p->in1_size <= 0 || p->in2_size <= 0 || last1 >= (uint64_t)p->in1_size || last2 >= (uint64_t)p->in2_size ||
      p->left_shift < 0 || p->left_shift > 30) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  const int8_t* in1 = (const int8_t*)woofles_buffer(dev, buffers, 0, (uint64_t)p->in1_size);
  const int8_t* in2 = (const int8_t*)woofles_buffer(dev, buffers, 1, (uint64_t)p->in2_size);
  int8_t* out = (int8_t*)woofles_buffer(dev, buffers, 2, total);
  if (in1 == NULL || in2 == NULL || out == NULL) return TVMD_ERR_INVALID_ARGUMENT;

  const int32_t* s = p->out_shape;
  size_t o = 0;
  for (int32_t i0 = 0; i0 < s[0]; ++i0) {
    for (int32_t i1 = 0; i1 < s[1]; ++i1) {
      for (int32_t i2 = 0; i2 < s[2]; ++i2) {
        const size_t a_row = (size_t)i0 * p->in1_strides[0] + (size_t)i1 * p->in1_strides[1] +
                             (size_t)i2 * p->in1_strides[2];
        const size_t b_row = (size_t)i0 * p->in2_strides[0] + (size_t)i1 * p->in2_strides[1] +
                             (size_t)i2 * p->in2_strides[2];
        for (int32_t i3 = 0; i3 < s[3]; ++i3) {
          out[o++] = (int8_t)woofles_add_one(p, in1[a_row + (size_t)i3 * p->in1_strides[3]],
                                             in2[b_row + (size_t)i3 * p->in2_strides[3]]);
        }
      }
    }
  }
  const uint64_t width = dev->mac_width;
  woofles_kernel_end(dev, (total + width - 1) / width * WOOFLES_ADD_STAGES + WOOFLES_TILE_OVERHEAD);
  return TVMD_OK;
}
