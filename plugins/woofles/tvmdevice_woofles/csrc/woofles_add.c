/*
 * ADD on the woofles vector unit, int8 and int16, with broadcasting up to
 * rank 6; bit-exact with TFLM's reference_integer_ops Add / BroadcastAdd
 * (int8) and AddElementwise / BroadcastAdd6DSlow (int16): both inputs are
 * offset, shifted left by left_shift (20 for int8, 15 for int16), rescaled to
 * a common scale, summed, rescaled to the output scale, offset and clamped.
 *
 * The address generator walks the output in row-major order with one stride
 * set per input (stride 0 repeats a broadcast dimension); the vector unit
 * retires mac_width elements per pass of its three-stage pipeline, int16
 * ones at half rate (WOOFLES_INT16_RATE).
 */
#include "woofles_kernels.h"
#include "woofles_tile.h"

#define WOOFLES_ADD_STAGES 3u /* scale input1, scale input2, scale the sum */
/* The dimensions the address generator walks: ADD_RANK in tvmdevice_woofles/params.py. */
#define WOOFLES_ADD_RANK ((int)WOOFLES_COUNT(((const tvmd_woofles_add_params_t*)0)->out_shape))

static inline int32_t woofles_add_one(const tvmd_woofles_add_params_t* p, int32_t a, int32_t b) {
  const int32_t x1 = (int32_t)((uint32_t)(a + p->input1_offset) << p->left_shift);
  const int32_t x2 = (int32_t)((uint32_t)(b + p->input2_offset) << p->left_shift);
  const int32_t s1 = tvmd_multiply_by_quantized_multiplier(x1, p->input1_multiplier, p->input1_shift);
  const int32_t s2 = tvmd_multiply_by_quantized_multiplier(x2, p->input2_multiplier, p->input2_shift);
  const int32_t sum = (int32_t)((uint32_t)s1 + (uint32_t)s2);
  const int32_t y = tvmd_multiply_by_quantized_multiplier(sum, p->output_multiplier, p->output_shift);
  return tvmd_clamp_i32((int32_t)((uint32_t)y + (uint32_t)p->output_offset), p->act_min, p->act_max);
}

static int32_t woofles_add(const void* params, void* const* buffers, void* resource_handle, int wide) {
  const tvmd_woofles_add_params_t* p = (const tvmd_woofles_add_params_t*)params;
  tvm_device_woofles_t* dev = (tvm_device_woofles_t*)resource_handle;
  if (p == NULL || buffers == NULL || dev == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  int32_t status = woofles_kernel_begin(dev);
  if (status != TVMD_OK) return status;
  uint64_t total = 1, last1 = 0, last2 = 0;
  for (int d = 0; d < WOOFLES_ADD_RANK; ++d) {
    if (p->out_shape[d] <= 0 || p->in1_strides[d] < 0 || p->in2_strides[d] < 0) return TVMD_ERR_INVALID_ARGUMENT;
    total *= (uint64_t)p->out_shape[d];
    last1 += (uint64_t)(p->out_shape[d] - 1) * (uint64_t)p->in1_strides[d];
    last2 += (uint64_t)(p->out_shape[d] - 1) * (uint64_t)p->in2_strides[d];
  }
  /* The last element each stride set reaches must lie inside its input. */
  if (p->in1_size <= 0 || p->in2_size <= 0 || last1 >= (uint64_t)p->in1_size || last2 >= (uint64_t)p->in2_size) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  const uint64_t esize = wide ? 2u : 1u;
  const uint8_t* in1 = woofles_buffer(dev, buffers, 0, (uint64_t)p->in1_size * esize);
  const uint8_t* in2 = woofles_buffer(dev, buffers, 1, (uint64_t)p->in2_size * esize);
  uint8_t* out = woofles_buffer(dev, buffers, 2, total * esize);
  if (in1 == NULL || in2 == NULL || out == NULL) return TVMD_ERR_INVALID_ARGUMENT;

  /* Rows along the innermost dimension; the outer ones advance like an odometer. */
  const int last = WOOFLES_ADD_RANK - 1;
  const size_t row = (size_t)p->out_shape[last];
  const size_t s1 = (size_t)p->in1_strides[last], s2 = (size_t)p->in2_strides[last];
  int32_t index[WOOFLES_ADD_RANK];
  memset(index, 0, sizeof(index));
  size_t o1 = 0, o2 = 0;
  for (size_t o = 0; o < total; o += row) {
    for (size_t j = 0; j < row; ++j) {
      const int32_t a = woofles_load_elem(in1, o1 + j * s1, wide);
      const int32_t b = woofles_load_elem(in2, o2 + j * s2, wide);
      woofles_store_elem(out, o + j, wide, woofles_add_one(p, a, b));
    }
    for (int d = last - 1; d >= 0; --d) {
      o1 += (size_t)p->in1_strides[d];
      o2 += (size_t)p->in2_strides[d];
      if (++index[d] < p->out_shape[d]) break;
      o1 -= (size_t)p->in1_strides[d] * (size_t)p->out_shape[d];
      o2 -= (size_t)p->in2_strides[d] * (size_t)p->out_shape[d];
      index[d] = 0;
    }
  }
  const uint64_t width = dev->mac_width;
  const uint64_t rate = wide ? WOOFLES_INT16_RATE : 1u;
  woofles_kernel_end(dev, (total + width - 1) / width * WOOFLES_ADD_STAGES * rate + WOOFLES_TILE_OVERHEAD);
  return TVMD_OK;
}

int32_t tvmd_woofles_add_s8(const void* params, void* const* buffers, void* resource_handle) {
  return woofles_add(params, buffers, resource_handle, 0);
}

int32_t tvmd_woofles_add_s16(const void* params, void* const* buffers, void* resource_handle) {
  return woofles_add(params, buffers, resource_handle, 1);
}
