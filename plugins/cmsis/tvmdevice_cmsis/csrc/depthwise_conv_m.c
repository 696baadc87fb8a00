/*
 * DEPTHWISE_CONV_2D for the M-profile packing (-mcpu=cortex-m*): the
 * operands as CMSIS-NN's arm_depthwise_conv_s8 takes them, no scratch
 * (arm_depthwise_conv_s8 needs none).  The int8 filter [1, KH, KW, out_ch]
 * is read in place from the filter buffer (buffers[1]); output channel
 * c * depth_multiplier + m sums the taps inside the image of input channel
 * c, as TFLM's reference DepthwiseConvPerChannel does.  Integer arithmetic
 * only; the int32 sums cannot overflow (bounded at prepare).
 */
#include "internal.h"

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
      for (int32_t ox = 0; ox < p->out_w; ox++) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        for (int32_t ic = 0; ic < p->in_ch; ic++) {
          for (int32_t m = 0; m < dm; m++) {
            const int32_t oc = ic * dm + m;
            int32_t acc = 0;
            for (int32_t fy = 0; fy < p->filter_h; fy++) {
              const int32_t iy = iy0 + fy * p->dilation_h;
              if (iy < 0 || iy >= p->in_h) continue;
              for (int32_t fx = 0; fx < p->filter_w; fx++) {
                const int32_t ix = ix0 + fx * p->dilation_w;
                if (ix < 0 || ix >= p->in_w) continue;
                const int32_t x = image[((size_t)iy * (size_t)p->in_w + (size_t)ix) * (size_t)p->in_ch + (size_t)ic];
                const int32_t w = io.filter[(size_t)(fy * p->filter_w + fx) * (size_t)p->out_ch + (size_t)oc];
                acc += (x + p->q.input_offset) * w;
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
