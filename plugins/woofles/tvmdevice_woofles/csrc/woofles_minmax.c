/*
 * MAXIMUM and MINIMUM on the woofles vector unit, int8, with broadcasting up
 * to rank 4; bit-exact with TFLM's MaximumMinimumBroadcastSlow, which
 * compares the raw int8 values (no rescale).  The address generator walks
 * the output in row-major order with one stride set per input (stride 0
 * repeats a broadcast dimension); one compare stage per mac_width elements.
 */
#include "woofles_kernels.h"
#include "woofles_tile.h"

/* The loops walk exactly four dimensions (MINMAX_RANK in tvmdevice_woofles/params.py). */
typedef char woofles_minmax_rank_is_4[WOOFLES_COUNT(((const tvmd_woofles_minmax_params_t*)0)->out_shape) == 4 ? 1
                                                                                                              : -1];

static int32_t woofles_minmax(const void* params, void* const* buffers, void* resource_handle, int is_max) {
  const tvmd_woofles_minmax_params_t* p = (const tvmd_woofles_minmax_params_t*)params;
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
  if (p->in1_size <= 0 || p->in2_size <= 0 || last1 >= (uint64_t)p->in1_size || last2 >= (uint64_t)p->in2_size) {
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
          const int8_t a = in1[a_row + (size_t)i3 * p->in1_strides[3]];
          const int8_t b = in2[b_row + (size_t)i3 * p->in2_strides[3]];
          out[o++] = is_max ? (a > b ? a : b) : (a < b ? a : b);
        }
      }
    }
  }
  const uint64_t width = dev->mac_width;
  woofles_kernel_end(dev, (total + width - 1) / width + WOOFLES_TILE_OVERHEAD);
  return TVMD_OK;
}

int32_t tvmd_woofles_maximum_s8(const void* params, void* const* buffers, void* resource_handle) {
  return woofles_minmax(params, buffers, resource_handle, 1);
}

int32_t tvmd_woofles_minimum_s8(const void* params, void* const* buffers, void* resource_handle) {
  return woofles_minmax(params, buffers, resource_handle, 0);
}
