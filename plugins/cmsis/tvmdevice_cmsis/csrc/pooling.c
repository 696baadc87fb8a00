/*
 * AVERAGE_POOL_2D and MAX_POOL_2D, int8: TFLM's reference_integer_ops
 * AveragePool / MaxPool (CMSIS-NN's arm_avgpool_s8 / arm_max_pool_s8 match).
 *
 * Windows are clipped to the image.  The average divides by the number of
 * taps inside the image, rounding half away from zero with C's truncating
 * division; the maximum starts from -128.  Input and output share their
 * quantization (checked at prepare time), so only the activation clamp is
 * applied.  Both vectorize across the contiguous channels of a pixel.
 */
#include "internal.h"

size_t tvmd_cmsis_avg_pool_s8_get_buffer_size(const tvmd_cmsis_pool_params_t* p) {
  return (size_t)p->channels * sizeof(int32_t); /* as arm_avgpool_s8_get_buffer_size */
}

size_t tvmd_cmsis_max_pool_s8_get_buffer_size(const tvmd_cmsis_pool_params_t* p) {
  (void)p;
  return 0;
}

/* The clipped window [start, end) of filter taps along one axis. */
static void clip(int32_t origin, int32_t filter, int32_t size, int32_t* start, int32_t* end) {
  *start = tvmd_cmsis_max(0, -origin);
  *end = tvmd_cmsis_min(filter, size - origin);
}

static int32_t check(const tvmd_cmsis_pool_params_t* p, uint32_t kind, void* const* buffers) {
  if (p == NULL || p->kind != kind || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (buffers[0] == NULL || buffers[1] == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  return TVMD_OK;
}

TVMD_CMSIS_SIMD
static void sum_pixel(int32_t* restrict acc, const int8_t* restrict src, int32_t channels) {
  for (int32_t c = 0; c < channels; c++) acc[c] += src[c];
}

TVMD_CMSIS_SIMD
static void max_pixel(int8_t* restrict out, const int8_t* restrict src, int32_t channels) {
  for (int32_t c = 0; c < channels; c++) out[c] = src[c] > out[c] ? src[c] : out[c];
}

int32_t tvmd_cmsis_avg_pool_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_pool_params_t* p = (const tvmd_cmsis_pool_params_t*)params;
  int32_t status = check(p, TVMD_CMSIS_KIND_AVG_POOL, buffers);
  if (status != TVMD_OK) return status;
  if (buffers[2] == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  status = tvmd_cmsis_enter(resource_handle, TVMD_CMSIS_KIND_AVG_POOL, 0);
  if (status != TVMD_OK) return status;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  int32_t* acc = (int32_t*)buffers[2];
  const int32_t ch = p->channels;
  for (int32_t b = 0; b < p->batches; b++) {
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h;
      int32_t fy0, fy1;
      clip(iy0, p->filter_h, p->in_h, &fy0, &fy1);
      for (int32_t ox = 0; ox < p->out_w; ox++) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        int32_t fx0, fx1;
        clip(ix0, p->filter_w, p->in_w, &fx0, &fx1);
        const int32_t count = (fy1 - fy0) * (fx1 - fx0);
        if (fy1 <= fy0 || fx1 <= fx0) return TVMD_ERR_KERNEL; /* TFLM fails an empty window too */
        for (int32_t c = 0; c < ch; c++) acc[c] = 0;
        for (int32_t fy = fy0; fy < fy1; fy++) {
          for (int32_t fx = fx0; fx < fx1; fx++) {
            const size_t pixel = ((size_t)b * (size_t)p->in_h + (size_t)(iy0 + fy)) * (size_t)p->in_w +
                                 (size_t)(ix0 + fx);
            sum_pixel(acc, input + pixel * (size_t)ch, ch);
          }
        }
        int8_t* out = output + (((size_t)b * (size_t)p->out_h + (size_t)oy) * (size_t)p->out_w + (size_t)ox) *
                                   (size_t)ch;
        for (int32_t c = 0; c < ch; c++) {
          const int32_t a = acc[c];
          int32_t v = a > 0 ? (a + count / 2) / count : (a - count / 2) / count;
          v = tvmd_cmsis_min(tvmd_cmsis_max(v, p->act_min), p->act_max);
          out[c] = (int8_t)v;
        }
      }
    }
  }
  return TVMD_OK;
}

int32_t tvmd_cmsis_max_pool_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_pool_params_t* p = (const tvmd_cmsis_pool_params_t*)params;
  int32_t status = check(p, TVMD_CMSIS_KIND_MAX_POOL, buffers);
  if (status != TVMD_OK) return status;
  status = tvmd_cmsis_enter(resource_handle, TVMD_CMSIS_KIND_MAX_POOL, 0);
  if (status != TVMD_OK) return status;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  const int32_t ch = p->channels;
  for (int32_t b = 0; b < p->batches; b++) {
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h;
      int32_t fy0, fy1;
      clip(iy0, p->filter_h, p->in_h, &fy0, &fy1);
      for (int32_t ox = 0; ox < p->out_w; ox++) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        int32_t fx0, fx1;
        clip(ix0, p->filter_w, p->in_w, &fx0, &fx1);
        int8_t* out = output + (((size_t)b * (size_t)p->out_h + (size_t)oy) * (size_t)p->out_w + (size_t)ox) *
                                   (size_t)ch;
        for (int32_t c = 0; c < ch; c++) out[c] = INT8_MIN;
        for (int32_t fy = fy0; fy < fy1; fy++) {
          for (int32_t fx = fx0; fx < fx1; fx++) {
            const size_t pixel = ((size_t)b * (size_t)p->in_h + (size_t)(iy0 + fy)) * (size_t)p->in_w +
                                 (size_t)(ix0 + fx);
            max_pixel(out, input + pixel * (size_t)ch, ch);
          }
        }
        for (int32_t c = 0; c < ch; c++) {
          out[c] = (int8_t)tvmd_cmsis_min(tvmd_cmsis_max(out[c], p->act_min), p->act_max);
        }
      }
    }
  }
  return TVMD_OK;
}
