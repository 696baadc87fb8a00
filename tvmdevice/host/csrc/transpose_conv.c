/*
 * TRANSPOSE_CONV, int8: TFLM's reference_integer_ops::TransposeConv.  TFLM
 * scatters each input pixel times the filter into an int32 scratch image;
 * here each output gathers the same products instead (the input pixels and
 * taps with iy * stride - pad + ky == oy), so no scratch is needed.  The
 * int32 sums wrap like TFLM's, and a wrapping sum does not depend on the
 * order of its terms, so the bits are the same.  Then the bias is added, the
 * sum requantized per channel, offset and clamped.
 */
#include "internal.h"

int32_t tvmd_c_transpose_conv_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_transpose_conv_params_t* p = (const tvmd_c_transpose_conv_params_t*)params;
  const int8_t* filter = (const int8_t*)buffers[1]; /* buffers[0] is the output shape */
  const int8_t* input = (const int8_t*)buffers[2];
  const int32_t* bias = p->num_inputs > 3 ? (const int32_t*)buffers[3] : NULL;
  int8_t* output = (int8_t*)buffers[p->num_inputs];
  const size_t in_ch = (size_t)p->in_ch, out_ch = (size_t)p->out_ch;
  (void)resource_handle;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        int8_t* out = output + (((size_t)b * (size_t)p->out_h + (size_t)oy) * (size_t)p->out_w + (size_t)ox) * out_ch;
        for (size_t oc = 0; oc < out_ch; ++oc) {
          uint32_t acc = 0;
          for (int32_t ky = 0; ky < p->filter_h; ++ky) {
            const int32_t ty = oy + p->pad_h - ky;
            if (ty < 0 || ty % p->stride_h != 0 || ty / p->stride_h >= p->in_h) continue;
            const int32_t iy = ty / p->stride_h;
            for (int32_t kx = 0; kx < p->filter_w; ++kx) {
              const int32_t tx = ox + p->pad_w - kx;
              if (tx < 0 || tx % p->stride_w != 0 || tx / p->stride_w >= p->in_w) continue;
              const int32_t ix = tx / p->stride_w;
              const int8_t* x = input + (((size_t)b * (size_t)p->in_h + (size_t)iy) * (size_t)p->in_w + (size_t)ix) *
                                            in_ch;
              const int8_t* w = filter + ((oc * (size_t)p->filter_h + (size_t)ky) * (size_t)p->filter_w +
                                          (size_t)kx) * in_ch;
              for (size_t ic = 0; ic < in_ch; ++ic) {
                acc += (uint32_t)(((int32_t)x[ic] + p->input_offset) * (int32_t)w[ic]);
              }
            }
          }
          if (bias != NULL) acc += (uint32_t)bias[oc];
          const int32_t y = tvmd_multiply_by_quantized_multiplier(tvmd_wrap_i32(acc), p->multiplier[oc], p->shift[oc]);
          out[oc] = tvmd_c_clamp_s8(y + p->output_offset, p->act_min, p->act_max);
        }
      }
    }
  }
  return TVMD_OK;
}
