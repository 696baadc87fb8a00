/*
 * RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR, NHWC: TFLM's reference
 * ResizeNearestNeighbor and ResizeBilinearInteger.  Which input rows and
 * columns each output pixel reads was computed in Python, exactly as TFLM
 * computes it (params rows/cols); the kernels only read those tables.
 */
#include <string.h>

#include "internal.h"

int32_t tvmd_c_resize_nearest(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_resize_params_t* p = (const tvmd_c_resize_params_t*)params;
  const uint8_t* input = (const uint8_t*)buffers[0];
  uint8_t* out = (uint8_t*)buffers[2];
  const size_t pixel = (size_t)p->channels * (size_t)p->itemsize;
  const size_t row = (size_t)p->in_w * pixel, image = (size_t)p->in_h * row;
  (void)resource_handle;
  for (int32_t b = 0; b < p->batches; ++b) {
    const uint8_t* base = input + (size_t)b * image;
    for (int32_t y = 0; y < p->out_h; ++y) {
      const uint8_t* in_row = base + (size_t)p->rows[y] * row;
      for (int32_t x = 0; x < p->out_w; ++x, out += pixel) {
        memcpy(out, in_row + (size_t)p->cols[x] * pixel, pixel);
      }
    }
  }
  return TVMD_OK;
}

/* TFLM's rounding of the Q20 sum (without TFLITE_SINGLE_ROUNDING): half away from zero. */
static int8_t tvmd_c_round_q20(int64_t sum) {
  const int64_t round = sum > 0 ? ((int64_t)1 << 19) : -((int64_t)1 << 19);
  return (int8_t)((sum + round) / ((int64_t)1 << 20));
}

int32_t tvmd_c_resize_bilinear_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_resize_params_t* p = (const tvmd_c_resize_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* out = (int8_t*)buffers[2];
  const int64_t one = 1 << 10;
  const size_t depth = (size_t)p->channels;
  const size_t row = (size_t)p->in_w * depth, image = (size_t)p->in_h * row;
  (void)resource_handle;
  for (int32_t b = 0; b < p->batches; ++b) {
    const int8_t* base = input + (size_t)b * image;
    for (int32_t y = 0; y < p->out_h; ++y) {
      const int32_t* ty = p->rows + 3 * y;
      const int64_t dy = (int64_t)ty[2] - one * ty[0];
      const int8_t* r0 = base + (size_t)ty[0] * row;
      const int8_t* r1 = base + (size_t)ty[1] * row;
      for (int32_t x = 0; x < p->out_w; ++x) {
        const int32_t* tx = p->cols + 3 * x;
        const int64_t dx = (int64_t)tx[2] - one * tx[0];
        const int8_t* p00 = r0 + (size_t)tx[0] * depth;
        const int8_t* p10 = r1 + (size_t)tx[0] * depth;
        const int8_t* p01 = r0 + (size_t)tx[1] * depth;
        const int8_t* p11 = r1 + (size_t)tx[1] * depth;
        for (size_t c = 0; c < depth; ++c) {
          const int64_t sum = (int64_t)p00[c] * (one - dy) * (one - dx) + (int64_t)p10[c] * dy * (one - dx) +
                              (int64_t)p01[c] * (one - dy) * dx + (int64_t)p11[c] * dy * dx;
          *out++ = tvmd_c_round_q20(sum);
        }
      }
    }
  }
  return TVMD_OK;
}
