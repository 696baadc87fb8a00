/*
 * The M-profile pooling walk shared by the int8 (pooling.c) and int16
 * (pooling_s16.c) kernels: each output pixel goes a group of channels at a
 * time through its whole window clipped to the image, the group's running
 * values in registers (the plain path keeps them in scratch); the kernels
 * supply the window functions for their width and instruction set.
 * Included only by those two files, on M-profile builds.
 */
#ifndef TVMD_CMSIS_POOLING_M_H_
#define TVMD_CMSIS_POOLING_M_H_

#include "internal.h"
#include "mprofile.h"

#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
/* An output pixel's window clipped to the image: tap (r, c) is channel 0 at
 * element first + r * row_step + c * ch of the kernel's width. */
typedef struct {
  const void* first;
  int32_t rows, cols, ch;
  size_t row_step;
} tvmd_pool_window_t;

/* What a kernel does with one window: the output pixel's channels into out. */
typedef void (*tvmd_pool_window_fn)(const tvmd_pool_window_t* w, void* out, const tvmd_cmsis_pool_params_t* p);

/* The window of output pixel (b, oy, ox) of input (elements of `bytes`),
 * clipped (empty when it lies outside the image). */
TVMD_CMSIS_INLINE tvmd_pool_window_t tvmd_pool_window(const tvmd_cmsis_pool_params_t* p, const void* input,
                                                      int bytes, int32_t b, int32_t oy, int32_t ox) {
  const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
  const int32_t fy0 = tvmd_cmsis_max(0, -iy0), fy1 = tvmd_cmsis_min(p->filter_h, p->in_h - iy0);
  const int32_t fx0 = tvmd_cmsis_max(0, -ix0), fx1 = tvmd_cmsis_min(p->filter_w, p->in_w - ix0);
  tvmd_pool_window_t w;
  w.rows = fy1 > fy0 ? fy1 - fy0 : 0;
  w.cols = fx1 > fx0 ? fx1 - fx0 : 0;
  w.ch = p->channels;
  w.row_step = (size_t)p->in_w * (size_t)p->channels;
  const size_t pixel = ((size_t)b * (size_t)p->in_h + (size_t)(iy0 + fy0)) * (size_t)p->in_w + (size_t)(ix0 + fx0);
  w.first = (const char*)input + (w.rows > 0 && w.cols > 0 ? pixel * (size_t)p->channels * (size_t)bytes : 0);
  return w;
}

/* Every output pixel through `window` (a constant at each call, so the call
 * is direct once inlined); an average fails an empty window, as TFLM does. */
TVMD_CMSIS_INLINE int32_t tvmd_pool_m(const tvmd_cmsis_pool_params_t* p, const void* input, void* output,
                                      int bytes, int is_avg, tvmd_pool_window_fn window) {
  char* out = (char*)output;
  const size_t pixel_bytes = (size_t)p->channels * (size_t)bytes;
  for (int32_t b = 0; b < p->batches; b++) {
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      for (int32_t ox = 0; ox < p->out_w; ox++, out += pixel_bytes) {
        const tvmd_pool_window_t w = tvmd_pool_window(p, input, bytes, b, oy, ox);
        if (is_avg && (w.rows == 0 || w.cols == 0)) return TVMD_ERR_KERNEL;
        window(&w, out, p);
      }
    }
  }
  return TVMD_OK;
}

/* The average of the sum a of count taps, TFLM's rounding (halves away from
 * zero), clamped. */
static inline int32_t tvmd_pool_average(int32_t a, int32_t count, const tvmd_cmsis_pool_params_t* p) {
  const int32_t v = tvmd_rounded_average_i32(a, count);
  return tvmd_cmsis_min(tvmd_cmsis_max(v, p->act_min), p->act_max);
}
#endif

#endif /* TVMD_CMSIS_POOLING_M_H_ */
