/*
 * DEPTHWISE_CONV_2D for the M-profile packing (-mcpu=cortex-m*): the
 * operands as CMSIS-NN's arm_depthwise_conv_s8 takes them, no scratch
 * (arm_depthwise_conv_s8 needs none).  The int8 filter [1, KH, KW, out_ch]
 * is read in place from the filter buffer (buffers[1]); output channel
 * c * depth_multiplier + m sums the taps inside the image of input channel
 * c, as TFLM's reference DepthwiseConvPerChannel does (the range of taps
 * inside the image is found once per output row and pixel, not per tap).
 * Integer arithmetic only; the int32 sums cannot overflow (bounded at
 * prepare).
 */
#include "internal.h"

/* The taps [*lo, *hi) of a filter axis whose input coordinate
 * start + t * dilation lies in [0, size). */
static void tap_range(int32_t start, int32_t dilation, int32_t taps, int32_t size, int32_t* lo, int32_t* hi) {
  int32_t a = 0, b = taps;
  if (start < 0) a = (-start + dilation - 1) / dilation;
  if (start + (b - 1) * dilation >= size) b = size - start <= 0 ? 0 : (size - start + dilation - 1) / dilation;
  *lo = a;
  *hi = b > a ? b : a;
}

size_t tvmd_cmsis_depthwise_conv_m_s8_get_buffer_size(const tvmd_cmsis_depthwise_conv_m_params_t* p) {
  (void)p;
  return 0;
}

int32_t tvmd_cmsis_depthwise_conv_m_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_depthwise_conv_m_params_t* p = (const tvmd_cmsis_depthwise_conv_m_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_DEPTHWISE_CONV_M) return TVMD_ERR_INVALID_ARGUMENT;
  tvmd_cmsis_weighted_io_t io;
  const int32_t status = tvmd_cmsis_weighted_enter(buffers, p->num_inputs, 0, resource_handle,
                                                   TVMD_CMSIS_KIND_DEPTHWISE_CONV, p->macs, &io);
  if (status != TVMD_OK) return status;
  if (io.filter == NULL) return TVMD_ERR_INVALID_ARGUMENT;

  const int32_t dm = p->depth_multiplier, qstep = p->per_channel ? 1 : 0;
  const size_t in_image = (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
  int8_t* out = io.output;
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t* image = io.input + (size_t)b * in_image;
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h;
      int32_t fy0, fy1;
      tap_range(iy0, p->dilation_h, p->filter_h, p->in_h, &fy0, &fy1);
      for (int32_t ox = 0; ox < p->out_w; ox++) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        int32_t fx0, fx1;
        tap_range(ix0, p->dilation_w, p->filter_w, p->in_w, &fx0, &fx1);
        for (int32_t ic = 0; ic < p->in_ch; ic++) {
          for (int32_t m = 0; m < dm; m++) {
            const int32_t oc = ic * dm + m;
            int32_t acc = 0;
            for (int32_t fy = fy0; fy < fy1; fy++) {
              const int32_t iy = iy0 + fy * p->dilation_h;
              const int8_t* row = image + (size_t)iy * (size_t)p->in_w * (size_t)p->in_ch + (size_t)ic;
              const int8_t* taps = io.filter + (size_t)(fy * p->filter_w) * (size_t)p->out_ch + (size_t)oc;
              for (int32_t fx = fx0; fx < fx1; fx++) {
                const int32_t ix = ix0 + fx * p->dilation_w;
                acc += ((int32_t)row[(size_t)ix * (size_t)p->in_ch] + p->q.input_offset) *
                       (int32_t)taps[(size_t)fx * (size_t)p->out_ch];
              }
            }
            *out++ = tvmd_cmsis_output_s8(acc, io.bias, oc, p->multiplier[oc * qstep], p->shift[oc * qstep], &p->q);
          }
        }
      }
    }
  }
  return TVMD_OK;
}
