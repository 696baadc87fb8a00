/*
 * AVERAGE_POOL_2D and MAX_POOL_2D on int16 (CMSIS-NN's arm_avgpool_s16 /
 * arm_max_pool_s16; TFLM's reference_integer_ops AveragePool / MaxPool for
 * int16, whose values the tests check).  Windows are clipped to the image;
 * the average divides by the taps inside it, rounding half away from zero
 * with C's truncating division; the maximum starts from -32768.  Input and
 * output share their quantization (checked at prepare), so only the
 * activation clamp is applied.  The average keeps one pixel's channel sums in
 * scratch (channels int32, planned by the size query).
 */
#include "internal.h"

size_t tvmd_cmsis_avg_pool_s16_get_buffer_size(const tvmd_cmsis_pool_params_t* p) {
  return (size_t)p->channels * sizeof(int32_t);
}

size_t tvmd_cmsis_max_pool_s16_get_buffer_size(const tvmd_cmsis_pool_params_t* p) {
  (void)p;
  return 0;
}

static void clip(int32_t origin, int32_t filter, int32_t size, int32_t* start, int32_t* end) {
  *start = tvmd_cmsis_max(0, -origin);
  *end = tvmd_cmsis_min(filter, size - origin);
}

static int32_t start(const tvmd_cmsis_pool_params_t* p, uint32_t kind, void* const* buffers, int with_scratch,
                     void* resource_handle) {
  if (p == NULL || p->kind != kind || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (buffers[0] == NULL || buffers[1] == NULL || (with_scratch && buffers[2] == NULL)) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  return tvmd_cmsis_enter(resource_handle, kind, 0);
}

static inline const int16_t* pixel_at(const int16_t* input, const tvmd_cmsis_pool_params_t* p, int32_t b,
                                      int32_t y, int32_t x) {
  return input + (((size_t)b * (size_t)p->in_h + (size_t)y) * (size_t)p->in_w + (size_t)x) * (size_t)p->channels;
}

int32_t tvmd_cmsis_avg_pool_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_pool_params_t* p = (const tvmd_cmsis_pool_params_t*)params;
  const int32_t status = start(p, TVMD_CMSIS_KIND_AVG_POOL_S16, buffers, 1, resource_handle);
  if (status != TVMD_OK) return status;
  const int16_t* input = (const int16_t*)buffers[0];
  int16_t* out = (int16_t*)buffers[1];
  int32_t* acc = (int32_t*)buffers[2];
  const int32_t ch = p->channels;
  for (int32_t b = 0; b < p->batches; b++) {
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h;
      int32_t fy0, fy1;
      clip(iy0, p->filter_h, p->in_h, &fy0, &fy1);
      for (int32_t ox = 0; ox < p->out_w; ox++, out += ch) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        int32_t fx0, fx1;
        clip(ix0, p->filter_w, p->in_w, &fx0, &fx1);
        if (fy1 <= fy0 || fx1 <= fx0) return TVMD_ERR_KERNEL; /* TFLM fails an empty window too */
        const int32_t count = (fy1 - fy0) * (fx1 - fx0);
        for (int32_t c = 0; c < ch; c++) acc[c] = 0;
        for (int32_t fy = fy0; fy < fy1; fy++) {
          for (int32_t fx = fx0; fx < fx1; fx++) {
            const int16_t* src = pixel_at(input, p, b, iy0 + fy, ix0 + fx);
            for (int32_t c = 0; c < ch; c++) acc[c] += src[c]; /* <= 2^15 * window taps: checked at prepare */
          }
        }
        for (int32_t c = 0; c < ch; c++) {
          const int32_t a = acc[c];
          const int32_t v = a > 0 ? (a + count / 2) / count : (a - count / 2) / count;
          out[c] = (int16_t)tvmd_cmsis_min(tvmd_cmsis_max(v, p->act_min), p->act_max);
        }
      }
    }
  }
  return TVMD_OK;
}

int32_t tvmd_cmsis_max_pool_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_pool_params_t* p = (const tvmd_cmsis_pool_params_t*)params;
  const int32_t status = start(p, TVMD_CMSIS_KIND_MAX_POOL_S16, buffers, 0, resource_handle);
  if (status != TVMD_OK) return status;
  const int16_t* input = (const int16_t*)buffers[0];
  int16_t* out = (int16_t*)buffers[1];
  const int32_t ch = p->channels;
  for (int32_t b = 0; b < p->batches; b++) {
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h;
      int32_t fy0, fy1;
      clip(iy0, p->filter_h, p->in_h, &fy0, &fy1);
      for (int32_t ox = 0; ox < p->out_w; ox++, out += ch) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        int32_t fx0, fx1;
        clip(ix0, p->filter_w, p->in_w, &fx0, &fx1);
        for (int32_t c = 0; c < ch; c++) out[c] = INT16_MIN;
        for (int32_t fy = fy0; fy < fy1; fy++) {
          for (int32_t fx = fx0; fx < fx1; fx++) {
            const int16_t* src = pixel_at(input, p, b, iy0 + fy, ix0 + fx);
            for (int32_t c = 0; c < ch; c++) out[c] = src[c] > out[c] ? src[c] : out[c];
          }
        }
        for (int32_t c = 0; c < ch; c++) out[c] = (int16_t)tvmd_cmsis_min(tvmd_cmsis_max(out[c], p->act_min), p->act_max);
      }
    }
  }
  return TVMD_OK;
}
