/*
 * CONV_2D and DEPTHWISE_CONV_2D on int16 activations with int8 filters:
 * TFLM's reference_integer_ops::ConvPerChannel and DepthwiseConvPerChannel
 * for int16.  The zero points are 0, so each output is
 * sum(input * filter) + bias, accumulated in the bias's type (bias_bits 64:
 * int64 and the 64-bit requantization; 32: int32, wrapping, and the 32-bit
 * one), then clamped to the activation range.  Taps outside the image are
 * skipped.
 */
#include "internal.h"

static inline int16_t finish(const tvmd_c_conv_s16_params_t* p, uint64_t acc, const void* bias, int32_t oc) {
  int32_t y;
  if (p->bias_bits == 64) {
    if (bias != NULL) acc += (uint64_t)((const int64_t*)bias)[oc];
    y = tvmd_multiply_by_quantized_multiplier_64(tvmd_wrap_i64(acc), p->multiplier[oc], p->shift[oc]);
  } else {
    uint32_t acc32 = (uint32_t)acc;
    if (bias != NULL) acc32 += (uint32_t)((const int32_t*)bias)[oc];
    y = tvmd_multiply_by_quantized_multiplier(tvmd_wrap_i32(acc32), p->multiplier[oc], p->shift[oc]);
  }
  return (int16_t)tvmd_clamp_i32(y, p->act_min, p->act_max);
}

static inline size_t at(int32_t b, int32_t y, int32_t x, int32_t h, int32_t w, int32_t ch) {
  return (((size_t)b * (size_t)h + (size_t)y) * (size_t)w + (size_t)x) * (size_t)ch;
}

int32_t tvmd_c_conv2d_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_conv_s16_params_t* p = (const tvmd_c_conv_s16_params_t*)params;
  const int16_t* input = (const int16_t*)buffers[0];
  const int8_t* filter = (const int8_t*)buffers[1];
  const void* bias = p->num_inputs == 3 ? buffers[2] : NULL;
  int16_t* output = (int16_t*)buffers[p->num_inputs];
  const int32_t per_group = p->out_ch / p->groups;
  (void)resource_handle;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        for (int32_t oc = 0; oc < p->out_ch; ++oc) {
          const int32_t group_start = (oc / per_group) * p->filter_in_ch;
          uint64_t acc = 0; /* wraps like TFLM's accumulator of either width: the low 32 bits serve int32 */
          for (int32_t ky = 0; ky < p->filter_h; ++ky) {
            const int32_t iy = oy * p->stride_h - p->pad_h + ky * p->dilation_h;
            if (iy < 0 || iy >= p->in_h) continue;
            for (int32_t kx = 0; kx < p->filter_w; ++kx) {
              const int32_t ix = ox * p->stride_w - p->pad_w + kx * p->dilation_w;
              if (ix < 0 || ix >= p->in_w) continue;
              const int16_t* xs = input + at(b, iy, ix, p->in_h, p->in_w, p->in_ch) + (size_t)group_start;
              const int8_t* ws = filter + at(oc, ky, kx, p->filter_h, p->filter_w, p->filter_in_ch);
              for (int32_t ic = 0; ic < p->filter_in_ch; ++ic) {
                acc += (uint64_t)(int64_t)((int32_t)xs[ic] * (int32_t)ws[ic]);
              }
            }
          }
          output[at(b, oy, ox, p->out_h, p->out_w, p->out_ch) + (size_t)oc] = finish(p, acc, bias, oc);
        }
      }
    }
  }
  return TVMD_OK;
}

int32_t tvmd_c_depthwise_conv2d_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_conv_s16_params_t* p = (const tvmd_c_conv_s16_params_t*)params;
  const int16_t* input = (const int16_t*)buffers[0];
  const int8_t* filter = (const int8_t*)buffers[1];
  const void* bias = p->num_inputs == 3 ? buffers[2] : NULL;
  int16_t* output = (int16_t*)buffers[p->num_inputs];
  (void)resource_handle;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        for (int32_t oc = 0; oc < p->out_ch; ++oc) {
          const int32_t ic = oc / p->depth_multiplier;
          uint64_t acc = 0;
          for (int32_t ky = 0; ky < p->filter_h; ++ky) {
            const int32_t iy = oy * p->stride_h - p->pad_h + ky * p->dilation_h;
            if (iy < 0 || iy >= p->in_h) continue;
            for (int32_t kx = 0; kx < p->filter_w; ++kx) {
              const int32_t ix = ox * p->stride_w - p->pad_w + kx * p->dilation_w;
              if (ix < 0 || ix >= p->in_w) continue;
              const int32_t x = input[at(b, iy, ix, p->in_h, p->in_w, p->in_ch) + (size_t)ic];
              const int32_t w = filter[at(0, ky, kx, p->filter_h, p->filter_w, p->out_ch) + (size_t)oc];
              acc += (uint64_t)(int64_t)(x * w);
            }
          }
          output[at(b, oy, ox, p->out_h, p->out_w, p->out_ch) + (size_t)oc] = finish(p, acc, bias, oc);
        }
      }
    }
  }
  return TVMD_OK;
}
