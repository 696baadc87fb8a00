/*
 * AVERAGE_POOL_2D and MAX_POOL_2D on int16: TFLM's reference_integer_ops
 * AveragePool and MaxPool for int16.  Each window is clipped to the image;
 * the average divides the int32 sum by the taps inside the image, rounding
 * half away from zero with C's truncating division; the maximum starts at
 * -32768.  No rescaling: input and output share their quantization.
 */
#include "internal.h"

static inline size_t at(const tvmd_c_pool_params_t* p, int32_t b, int32_t y, int32_t x, int32_t h, int32_t w) {
  return (((size_t)b * (size_t)h + (size_t)y) * (size_t)w + (size_t)x) * (size_t)p->channels;
}

static int32_t pool(const tvmd_c_pool_params_t* p, const int16_t* input, int16_t* output, int average) {
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      const int32_t in_y = oy * p->stride_h - p->pad_h;
      const int32_t y0 = tvmd_c_max(0, in_y), y1 = tvmd_c_min(p->in_h, in_y + p->filter_h);
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const int32_t in_x = ox * p->stride_w - p->pad_w;
        const int32_t x0 = tvmd_c_max(0, in_x), x1 = tvmd_c_min(p->in_w, in_x + p->filter_w);
        const int32_t count = (y1 - y0) * (x1 - x0);
        /* TFLM fails an average over a window that lies entirely in the padding. */
        if (average && (y1 <= y0 || x1 <= x0)) return TVMD_ERR_KERNEL;
        int16_t* out = output + at(p, b, oy, ox, p->out_h, p->out_w);
        for (int32_t c = 0; c < p->channels; ++c) {
          int32_t acc = average ? 0 : INT16_MIN;
          for (int32_t y = y0; y < y1; ++y) {
            for (int32_t x = x0; x < x1; ++x) {
              const int32_t v = input[at(p, b, y, x, p->in_h, p->in_w) + (size_t)c];
              acc = average ? acc + v : tvmd_c_max(acc, v);
            }
          }
          if (average) acc = tvmd_rounded_average_i32(acc, count);
          out[c] = (int16_t)tvmd_clamp_i32(acc, p->act_min, p->act_max);
        }
      }
    }
  }
  return TVMD_OK;
}

int32_t tvmd_c_avg_pool2d_s16(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  return pool((const tvmd_c_pool_params_t*)params, (const int16_t*)buffers[0], (int16_t*)buffers[1], 1);
}

int32_t tvmd_c_max_pool2d_s16(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  return pool((const tvmd_c_pool_params_t*)params, (const int16_t*)buffers[0], (int16_t*)buffers[1], 0);
}
