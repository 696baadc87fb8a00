/*
 * AVERAGE_POOL_2D and MAX_POOL_2D on the woofles vector unit, int8 and
 * int16; bit-exact with TFLM's reference_integer_ops AveragePool and MaxPool
 * (both types).  int16 lanes run at half rate (WOOFLES_INT16_RATE).
 *
 * Each tile holds up to mac_width channels of one output pixel; every cycle
 * one window tap of each lane's channel is folded in.  Windows are clipped to
 * the image; the average divides by the taps inside it, rounding half away
 * from zero with C's truncating division, exactly as the reference does.
 */
#include "woofles_kernels.h"
#include "woofles_tile.h"

static int32_t woofles_pool(const void* params, void* const* buffers, void* resource_handle, int average,
                            int wide) {
  const tvmd_woofles_pool_params_t* p = (const tvmd_woofles_pool_params_t*)params;
  tvm_device_woofles_t* dev = (tvm_device_woofles_t*)resource_handle;
  if (p == NULL || buffers == NULL || dev == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  int32_t status = woofles_kernel_begin(dev);
  if (status != TVMD_OK) return status;
  if (p->batches <= 0 || p->in_h <= 0 || p->in_w <= 0 || p->channels <= 0 || p->out_h <= 0 || p->out_w <= 0 ||
      p->filter_h <= 0 || p->filter_w <= 0 || p->stride_h <= 0 || p->stride_w <= 0 || p->pad_h < 0 ||
      p->pad_w < 0) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  const int32_t ch = p->channels;
  const uint64_t esize = wide ? 2u : 1u;
  const uint8_t* input = woofles_buffer(dev, buffers, 0, (uint64_t)p->batches * p->in_h * p->in_w * ch * esize);
  uint8_t* output = woofles_buffer(dev, buffers, 1, (uint64_t)p->batches * p->out_h * p->out_w * ch * esize);
  if (input == NULL || output == NULL) return TVMD_ERR_INVALID_ARGUMENT;

  const int32_t width = (int32_t)dev->mac_width;
  int32_t acc[WOOFLES_MAX_MAC_WIDTH];
  uint64_t tiles = 0;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h;
      const int32_t fy0 = woofles_max_i32(0, -iy0);
      const int32_t fy1 = woofles_min_i32(p->filter_h, p->in_h - iy0);
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        const int32_t fx0 = woofles_max_i32(0, -ix0);
        const int32_t fx1 = woofles_min_i32(p->filter_w, p->in_w - ix0);
        const int32_t count = (fy1 - fy0) * (fx1 - fx0);
        if (fy1 <= fy0 || fx1 <= fx0) return TVMD_ERR_KERNEL; /* window entirely in padding */
        const size_t out_px = (((size_t)b * p->out_h + oy) * p->out_w + ox) * ch;
        for (int32_t c0 = 0; c0 < ch; c0 += width) {
          const int32_t lanes = woofles_min_i32(width, ch - c0);
          for (int32_t l = 0; l < lanes; ++l) acc[l] = average ? 0 : wide ? INT16_MIN : INT8_MIN;
          for (int32_t fy = fy0; fy < fy1; ++fy) {
            for (int32_t fx = fx0; fx < fx1; ++fx) {
              const size_t in_px = (((size_t)b * p->in_h + iy0 + fy) * p->in_w + ix0 + fx) * ch + c0;
              for (int32_t l = 0; l < lanes; ++l) {
                const int32_t x = woofles_load_elem(input, in_px + (size_t)l, wide);
                acc[l] = average ? acc[l] + x : woofles_max_i32(acc[l], x);
              }
            }
          }
          for (int32_t l = 0; l < lanes; ++l) {
            int32_t v = acc[l];
            if (average) v = v > 0 ? (v + count / 2) / count : (v - count / 2) / count;
            woofles_store_elem(output, out_px + (size_t)(c0 + l), wide, tvmd_clamp_i32(v, p->act_min, p->act_max));
          }
          ++tiles;
        }
      }
    }
  }
  const uint64_t rate = wide ? WOOFLES_INT16_RATE : 1u;
  woofles_kernel_end(dev, tiles * ((uint64_t)p->filter_h * p->filter_w * rate + WOOFLES_TILE_OVERHEAD));
  return TVMD_OK;
}

int32_t tvmd_woofles_avg_pool2d_s8(const void* params, void* const* buffers, void* resource_handle) {
  return woofles_pool(params, buffers, resource_handle, 1, 0);
}

int32_t tvmd_woofles_max_pool2d_s8(const void* params, void* const* buffers, void* resource_handle) {
  return woofles_pool(params, buffers, resource_handle, 0, 0);
}

int32_t tvmd_woofles_avg_pool2d_s16(const void* params, void* const* buffers, void* resource_handle) {
  return woofles_pool(params, buffers, resource_handle, 1, 1);
}

int32_t tvmd_woofles_max_pool2d_s16(const void* params, void* const* buffers, void* resource_handle) {
  return woofles_pool(params, buffers, resource_handle, 0, 1);
}
