/*
 * CONV_2D and DEPTHWISE_CONV_2D, int8, per-channel (or per-tensor, repeated)
 * requantization: TFLM's reference_integer_ops::ConvPerChannel and
 * DepthwiseConvPerChannel.  Window (oy, ox) starts at input row
 * oy * stride - pad; taps outside the image are skipped.  Each output sums
 * (input + input_offset) * filter in int32, adds its bias and is requantized
 * with its channel's multiplier and shift, offset and clamped.
 */
#include "internal.h"

/* Output channels the depthwise loop accumulates at once (on the stack). */
enum { kDepthwiseBlock = 32 };

static inline int8_t requantize(const tvmd_c_conv_params_t* p, uint32_t acc, const int32_t* bias, int32_t oc) {
  if (bias != NULL) acc += (uint32_t)bias[oc];
  const int32_t y = tvmd_multiply_by_quantized_multiplier(tvmd_wrap_i32(acc), p->multiplier[oc], p->shift[oc]);
  return tvmd_c_clamp_s8(y + p->output_offset, p->act_min, p->act_max);
}

/* sum((x[i] + input_offset) * w[i]) for i < n, wrapping like an int32 accumulator. */
static inline uint32_t dot(const int8_t* x, const int8_t* w, int32_t n, int32_t input_offset) {
  uint32_t acc = 0;
  for (int32_t i = 0; i < n; ++i) acc += (uint32_t)(((int32_t)x[i] + input_offset) * (int32_t)w[i]);
  return acc;
}

/* Filter taps [start, end) of a window at origin inside an image of size: TFLM's bounds test per tap. */
static inline void taps(int32_t origin, int32_t dilation, int32_t filter, int32_t size, int32_t* start, int32_t* end) {
  int32_t k = 0;
  while (k < filter && origin + k * dilation < 0) ++k;
  *start = k;
  k = filter;
  while (k > *start && origin + (k - 1) * dilation >= size) --k;
  *end = k;
}

int32_t tvmd_c_conv2d_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_conv_params_t* p = (const tvmd_c_conv_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  const int8_t* filter = (const int8_t*)buffers[1];
  const int32_t* bias = p->num_inputs == 3 ? (const int32_t*)buffers[2] : NULL;
  int8_t* output = (int8_t*)buffers[p->num_inputs];
  const int32_t per_group = p->out_ch / p->groups;
  const size_t filter_stride = (size_t)p->filter_h * (size_t)p->filter_w * (size_t)p->filter_in_ch;
  /* Ungrouped, undilated along x: a window row is contiguous in input and filter. */
  const int contiguous_rows = p->groups == 1 && p->dilation_w == 1;
  (void)resource_handle;
  for (int32_t b = 0; b < p->batches; ++b) {
    const int8_t* image = input + (size_t)b * (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      const int32_t y0 = oy * p->stride_h - p->pad_h;
      int32_t ky0, ky1;
      taps(y0, p->dilation_h, p->filter_h, p->in_h, &ky0, &ky1);
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const int32_t x0 = ox * p->stride_w - p->pad_w;
        int32_t kx0, kx1;
        taps(x0, p->dilation_w, p->filter_w, p->in_w, &kx0, &kx1);
        for (int32_t oc = 0; oc < p->out_ch; ++oc) {
          const int8_t* w = filter + (size_t)oc * filter_stride;
          const int8_t* group_in = image + (size_t)(oc / per_group) * (size_t)p->filter_in_ch;
          uint32_t acc = 0;
          for (int32_t ky = ky0; ky < ky1; ++ky) {
            const int32_t iy = y0 + ky * p->dilation_h;
            if (contiguous_rows) {
              /* The window's row is one run of (kx1 - kx0) * in_ch values in
               * the input and in the filter: one dot product. */
              const int8_t* xs = image + ((size_t)iy * (size_t)p->in_w + (size_t)(x0 + kx0)) * (size_t)p->in_ch;
              const int8_t* ws = w + ((size_t)ky * (size_t)p->filter_w + (size_t)kx0) * (size_t)p->in_ch;
              acc += dot(xs, ws, (kx1 - kx0) * p->in_ch, p->input_offset);
              continue;
            }
            for (int32_t kx = kx0; kx < kx1; ++kx) {
              const int32_t ix = x0 + kx * p->dilation_w;
              const int8_t* xs = group_in + ((size_t)iy * (size_t)p->in_w + (size_t)ix) * (size_t)p->in_ch;
              const int8_t* ws = w + ((size_t)ky * (size_t)p->filter_w + (size_t)kx) * (size_t)p->filter_in_ch;
              acc += dot(xs, ws, p->filter_in_ch, p->input_offset);
            }
          }
          output[(((size_t)b * (size_t)p->out_h + (size_t)oy) * (size_t)p->out_w + (size_t)ox) * (size_t)p->out_ch +
                 (size_t)oc] = requantize(p, acc, bias, oc);
        }
      }
    }
  }
  return TVMD_OK;
}

int32_t tvmd_c_depthwise_conv2d_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_conv_params_t* p = (const tvmd_c_conv_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  const int8_t* filter = (const int8_t*)buffers[1];
  const int32_t* bias = p->num_inputs == 3 ? (const int32_t*)buffers[2] : NULL;
  int8_t* output = (int8_t*)buffers[p->num_inputs];
  const int32_t m = p->depth_multiplier;
  (void)resource_handle;
  for (int32_t b = 0; b < p->batches; ++b) {
    const int8_t* image = input + (size_t)b * (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      const int32_t y0 = oy * p->stride_h - p->pad_h;
      int32_t ky0, ky1;
      taps(y0, p->dilation_h, p->filter_h, p->in_h, &ky0, &ky1);
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const int32_t x0 = ox * p->stride_w - p->pad_w;
        int32_t kx0, kx1;
        taps(x0, p->dilation_w, p->filter_w, p->in_w, &kx0, &kx1);
        int8_t* out = output + (((size_t)b * (size_t)p->out_h + (size_t)oy) * (size_t)p->out_w + (size_t)ox) *
                                   (size_t)p->out_ch;
        /* Output channel oc = ic * m + j reads input channel ic: blocks of
         * output channels walk the input and the filter contiguously. */
        for (int32_t oc0 = 0; oc0 < p->out_ch; oc0 += kDepthwiseBlock) {
          const int32_t n = tvmd_c_min(kDepthwiseBlock, p->out_ch - oc0);
          uint32_t acc[kDepthwiseBlock] = {0};
          for (int32_t ky = ky0; ky < ky1; ++ky) {
            const int32_t iy = y0 + ky * p->dilation_h;
            for (int32_t kx = kx0; kx < kx1; ++kx) {
              const int32_t ix = x0 + kx * p->dilation_w;
              const int8_t* xs = image + ((size_t)iy * (size_t)p->in_w + (size_t)ix) * (size_t)p->in_ch;
              const int8_t* ws = filter + ((size_t)ky * (size_t)p->filter_w + (size_t)kx) * (size_t)p->out_ch +
                                 (size_t)oc0;
              if (m == 1) {
                for (int32_t j = 0; j < n; ++j) {
                  acc[j] += (uint32_t)(((int32_t)xs[oc0 + j] + p->input_offset) * (int32_t)ws[j]);
                }
              } else {
                for (int32_t j = 0; j < n; ++j) {
                  acc[j] += (uint32_t)(((int32_t)xs[(oc0 + j) / m] + p->input_offset) * (int32_t)ws[j]);
                }
              }
            }
          }
          for (int32_t j = 0; j < n; ++j) out[oc0 + j] = requantize(p, acc[j], bias, oc0 + j);
        }
      }
    }
  }
  return TVMD_OK;
}
