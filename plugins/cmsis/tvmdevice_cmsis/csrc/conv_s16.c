/*
 * CONV_2D and DEPTHWISE_CONV_2D on int16 activations with int8 filters
 * (CMSIS-NN's arm_convolve_s16 / arm_depthwise_conv_s16; TFLM's
 * reference_integer_ops ConvPerChannel / DepthwiseConvPerChannel for int16,
 * whose values the tests check).  Zero points are 0: each output is
 * sum(input * filter) + bias, accumulated at the bias's width (s16.h), the
 * taps outside the image skipped, the filter and input read in place.
 *
 * CONV_2D keeps one output pixel's accumulators for every output channel in
 * scratch (out_ch int64: planned by the size query, as arm_convolve_s16's
 * buffer) and walks the window once per pixel, each input channel vector
 * against each filter row: the inner loop runs over contiguous memory on
 * both sides.  DEPTHWISE_CONV_2D walks output channels innermost, the filter
 * row [out_ch] and the input pixel contiguous (no scratch).
 */
#include "s16.h"

static inline size_t at(int32_t b, int32_t y, int32_t x, int32_t h, int32_t w, int32_t ch) {
  return (((size_t)b * (size_t)h + (size_t)y) * (size_t)w + (size_t)x) * (size_t)ch;
}

size_t tvmd_cmsis_conv_s16_get_buffer_size(const tvmd_cmsis_conv_s16_params_t* p) {
  return (size_t)p->out_ch * sizeof(uint64_t);
}

size_t tvmd_cmsis_depthwise_conv_s16_get_buffer_size(const tvmd_cmsis_conv_s16_params_t* p) {
  (void)p;
  return 0;
}

static int32_t start(const tvmd_cmsis_conv_s16_params_t* p, uint32_t kind, void* const* buffers, int with_scratch,
                     void* resource_handle) {
  if (p == NULL || p->kind != kind || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (p->num_inputs != 2 && p->num_inputs != 3) return TVMD_ERR_INVALID_ARGUMENT;
  if (buffers[0] == NULL || buffers[1] == NULL || buffers[p->num_inputs] == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (with_scratch && buffers[p->num_inputs + 1] == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (p->groups < 1 || p->depth_multiplier < 1) return TVMD_ERR_INVALID_ARGUMENT;
  return tvmd_cmsis_enter(resource_handle, kind, p->macs);
}

int32_t tvmd_cmsis_conv_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_conv_s16_params_t* p = (const tvmd_cmsis_conv_s16_params_t*)params;
  const int32_t status = start(p, TVMD_CMSIS_KIND_CONV_S16, buffers, 1, resource_handle);
  if (status != TVMD_OK) return status;
  const int16_t* input = (const int16_t*)buffers[0];
  const int8_t* filter = (const int8_t*)buffers[1];
  const void* bias = p->num_inputs == 3 ? buffers[2] : NULL;
  int16_t* output = (int16_t*)buffers[p->num_inputs];
  uint64_t* acc = (uint64_t*)buffers[p->num_inputs + 1];
  const int32_t per_group = p->out_ch / p->groups;
  const size_t filter_row = (size_t)p->filter_h * (size_t)p->filter_w * (size_t)p->filter_in_ch;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        for (int32_t oc = 0; oc < p->out_ch; ++oc) acc[oc] = 0;
        for (int32_t ky = 0; ky < p->filter_h; ++ky) {
          const int32_t iy = oy * p->stride_h - p->pad_h + ky * p->dilation_h;
          if (iy < 0 || iy >= p->in_h) continue;
          for (int32_t kx = 0; kx < p->filter_w; ++kx) {
            const int32_t ix = ox * p->stride_w - p->pad_w + kx * p->dilation_w;
            if (ix < 0 || ix >= p->in_w) continue;
            const int16_t* pixel = input + at(b, iy, ix, p->in_h, p->in_w, p->in_ch);
            const size_t tap = ((size_t)ky * (size_t)p->filter_w + (size_t)kx) * (size_t)p->filter_in_ch;
            for (int32_t oc = 0; oc < p->out_ch; ++oc) {
              const int16_t* xs = pixel + (size_t)(oc / per_group) * (size_t)p->filter_in_ch;
              const int8_t* ws = filter + (size_t)oc * filter_row + tap;
              int64_t sum = 0; /* at most filter_in_ch products of 2^22: exact */
              for (int32_t ic = 0; ic < p->filter_in_ch; ++ic) sum += (int32_t)xs[ic] * (int32_t)ws[ic];
              acc[oc] += (uint64_t)sum;
            }
          }
        }
        int16_t* out = output + at(b, oy, ox, p->out_h, p->out_w, p->out_ch);
        for (int32_t oc = 0; oc < p->out_ch; ++oc) {
          out[oc] = tvmd_cmsis_output_s16(acc[oc], p->bias_bits, bias, oc, p->multiplier[oc], p->shift[oc],
                                          p->act_min, p->act_max);
        }
      }
    }
  }
  return TVMD_OK;
}

int32_t tvmd_cmsis_depthwise_conv_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_conv_s16_params_t* p = (const tvmd_cmsis_conv_s16_params_t*)params;
  const int32_t status = start(p, TVMD_CMSIS_KIND_DEPTHWISE_CONV_S16, buffers, 0, resource_handle);
  if (status != TVMD_OK) return status;
  const int16_t* input = (const int16_t*)buffers[0];
  const int8_t* filter = (const int8_t*)buffers[1];
  const void* bias = p->num_inputs == 3 ? buffers[2] : NULL;
  int16_t* output = (int16_t*)buffers[p->num_inputs];
  const int32_t dm = p->depth_multiplier;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        int16_t* out = output + at(b, oy, ox, p->out_h, p->out_w, p->out_ch);
        for (int32_t oc = 0; oc < p->out_ch; ++oc) {
          int64_t sum = 0; /* at most filter_h * filter_w products of 2^22 */
          for (int32_t ky = 0; ky < p->filter_h; ++ky) {
            const int32_t iy = oy * p->stride_h - p->pad_h + ky * p->dilation_h;
            if (iy < 0 || iy >= p->in_h) continue;
            for (int32_t kx = 0; kx < p->filter_w; ++kx) {
              const int32_t ix = ox * p->stride_w - p->pad_w + kx * p->dilation_w;
              if (ix < 0 || ix >= p->in_w) continue;
              const int32_t x = input[at(b, iy, ix, p->in_h, p->in_w, p->in_ch) + (size_t)(oc / dm)];
              const int32_t w = filter[((size_t)ky * (size_t)p->filter_w + (size_t)kx) * (size_t)p->out_ch +
                                       (size_t)oc];
              sum += x * w;
            }
          }
          out[oc] = tvmd_cmsis_output_s16((uint64_t)sum, p->bias_bits, bias, oc, p->multiplier[oc], p->shift[oc],
                                          p->act_min, p->act_max);
        }
      }
    }
  }
  return TVMD_OK;
}
