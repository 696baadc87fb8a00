/*
 * AVERAGE_POOL_2D and MAX_POOL_2D, int8: TFLM's reference_integer_ops
 * AveragePool and MaxPool.  Each window is clipped to the image; the average
 * divides the int32 sum by the taps inside the image, rounding half away from
 * zero with C's truncating division; the maximum starts at -128.  No
 * rescaling: input and output share their quantization.
 */
#include "internal.h"

typedef struct {
  int32_t y0, y1, x0, x1; /* the window's rows and columns inside the image, [start, end) */
} window_t;

static inline window_t clip(const tvmd_c_pool_params_t* p, int32_t oy, int32_t ox) {
  const int32_t in_y = oy * p->stride_h - p->pad_h;
  const int32_t in_x = ox * p->stride_w - p->pad_w;
  window_t w;
  w.y0 = tvmd_c_max(0, in_y);
  w.y1 = tvmd_c_min(p->in_h, in_y + p->filter_h);
  w.x0 = tvmd_c_max(0, in_x);
  w.x1 = tvmd_c_min(p->in_w, in_x + p->filter_w);
  return w;
}

static inline size_t at(const tvmd_c_pool_params_t* p, int32_t b, int32_t y, int32_t x, int32_t h, int32_t w) {
  return (((size_t)b * (size_t)h + (size_t)y) * (size_t)w + (size_t)x) * (size_t)p->channels;
}

int32_t tvmd_c_avg_pool2d_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_pool_params_t* p = (const tvmd_c_pool_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  (void)resource_handle;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const window_t w = clip(p, oy, ox);
        const int32_t count = (w.y1 - w.y0) * (w.x1 - w.x0);
        /* TFLM fails a window that lies entirely in the padding. */
        if (w.y1 <= w.y0 || w.x1 <= w.x0) return TVMD_ERR_KERNEL;
        int8_t* out = output + at(p, b, oy, ox, p->out_h, p->out_w);
        for (int32_t c = 0; c < p->channels; ++c) {
          int32_t acc = 0;
          for (int32_t y = w.y0; y < w.y1; ++y) {
            for (int32_t x = w.x0; x < w.x1; ++x) acc += input[at(p, b, y, x, p->in_h, p->in_w) + (size_t)c];
          }
          acc = tvmd_rounded_average_i32(acc, count);
          out[c] = tvmd_c_clamp_s8(acc, p->act_min, p->act_max);
        }
      }
    }
  }
  return TVMD_OK;
}

int32_t tvmd_c_max_pool2d_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_pool_params_t* p = (const tvmd_c_pool_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  (void)resource_handle;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const window_t w = clip(p, oy, ox);
        int8_t* out = output + at(p, b, oy, ox, p->out_h, p->out_w);
        for (int32_t c = 0; c < p->channels; ++c) {
          int32_t best = INT8_MIN;
          for (int32_t y = w.y0; y < w.y1; ++y) {
            for (int32_t x = w.x0; x < w.x1; ++x) {
              best = tvmd_c_max(best, input[at(p, b, y, x, p->in_h, p->in_w) + (size_t)c]);
            }
          }
          out[c] = tvmd_c_clamp_s8(best, p->act_min, p->act_max);
        }
      }
    }
  }
  return TVMD_OK;
}
