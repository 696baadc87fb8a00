/*
 * DEPTHWISE_CONV_2D, int8 with per-channel weights and any depth multiplier:
 * TFLM's reference_integer_ops::DepthwiseConvPerChannel (CMSIS-NN's
 * arm_depthwise_conv_s8 matches).
 *
 * The input image is first rewritten into scratch as floats with the input
 * offset added, laid out by *output* channel (input channel c repeated
 * depth_multiplier times) and zero padded to a multiple of TVMD_CMSIS_NB
 * channels.  Then every output pixel is, for each block of TVMD_CMSIS_NB
 * channels, a sum over the filter taps inside the image of two contiguous
 * vectors multiplied: accumulated in registers, exact in float32 (see
 * TVMD_CMSIS_K_CHUNK), moved to int32 and requantized per channel.  Taps
 * outside the image are skipped exactly as the reference skips them.
 */
#include "internal.h"

#define NB TVMD_CMSIS_NB

static size_t image_bytes(const tvmd_cmsis_depthwise_conv_params_t* p) {
  return (size_t)p->in_h * (size_t)p->in_w * (size_t)p->cp * sizeof(float);
}

size_t tvmd_cmsis_depthwise_conv_s8_get_buffer_size(const tvmd_cmsis_depthwise_conv_params_t* p) {
  return image_bytes(p) + (size_t)p->cp * sizeof(int32_t);
}

/* One batch's image as offset floats by output channel. */
TVMD_CMSIS_INLINE void expand_image(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* restrict image,
                                    float* restrict dst) {
  const size_t pixels = (size_t)p->in_h * (size_t)p->in_w;
  const int32_t dm = p->depth_multiplier, offset = p->q.input_offset;
  for (size_t px = 0; px < pixels; px++) {
    const int8_t* restrict src = image + px * (size_t)p->in_ch;
    float* restrict row = dst + px * (size_t)p->cp;
    if (dm == 1) {
      for (int32_t c = 0; c < p->in_ch; c++) row[c] = (float)(src[c] + offset);
    } else {
      for (int32_t c = 0; c < p->in_ch; c++) {
        for (int32_t m = 0; m < dm; m++) row[c * dm + m] = (float)(src[c] + offset);
      }
    }
    for (int32_t c = p->out_ch; c < p->cp; c++) row[c] = 0.0f;
  }
}

/* acc[0..NB) = sum of the taps inside the image for output pixel (oy, ox),
 * channels [c0, c0 + NB). */
TVMD_CMSIS_INLINE void pixel_block(const tvmd_cmsis_depthwise_conv_params_t* p, const float* restrict image,
                                   int32_t oy, int32_t ox, int32_t c0, int32_t* restrict acc) {
  const int32_t iy0 = oy * p->stride_h - p->pad_h;
  const int32_t ix0 = ox * p->stride_w - p->pad_w;
  float s[NB] = {0};
  int32_t t[NB] = {0};
  int32_t terms = 0;
  for (int32_t fy = 0; fy < p->filter_h; fy++) {
    const int32_t iy = iy0 + fy * p->dilation_h;
    if (iy < 0 || iy >= p->in_h) continue;
    for (int32_t fx = 0; fx < p->filter_w; fx++) {
      const int32_t ix = ix0 + fx * p->dilation_w;
      if (ix < 0 || ix >= p->in_w) continue;
      const float* restrict x = image + ((size_t)iy * (size_t)p->in_w + (size_t)ix) * (size_t)p->cp + c0;
      const float* restrict w = p->weights + (size_t)(fy * p->filter_w + fx) * (size_t)p->cp + c0;
      for (int32_t j = 0; j < NB; j++) s[j] += x[j] * w[j];
      if (++terms == TVMD_CMSIS_K_CHUNK) {
        for (int32_t j = 0; j < NB; j++) {
          t[j] += (int32_t)s[j];
          s[j] = 0.0f;
        }
        terms = 0;
      }
    }
  }
  for (int32_t j = 0; j < NB; j++) acc[j] = t[j] + (int32_t)s[j];
}

TVMD_CMSIS_SIMD
int32_t tvmd_cmsis_depthwise_conv_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_depthwise_conv_params_t* p = (const tvmd_cmsis_depthwise_conv_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_DEPTHWISE_CONV) return TVMD_ERR_INVALID_ARGUMENT;
  tvmd_cmsis_weighted_io_t io;
  const int32_t status = tvmd_cmsis_weighted_enter(buffers, p->num_inputs, 1, resource_handle,
                                                   TVMD_CMSIS_KIND_DEPTHWISE_CONV, p->macs, &io);
  if (status != TVMD_OK) return status;
  const int8_t* input = io.input;
  const int32_t* bias = io.bias;
  int8_t* output = io.output;
  void* scratch = io.scratch;

  float* image = (float*)scratch;
  int32_t* acc = (int32_t*)((uint8_t*)scratch + image_bytes(p));
  const size_t in_size = (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
  for (int32_t b = 0; b < p->batches; b++) {
    expand_image(p, input + (size_t)b * in_size, image);
#if TVMD_CMSIS_X86
    if (tvmd_cmsis_use_simd() && p->filter_h * p->filter_w <= TVMD_CMSIS_K_CHUNK) {
      tvmd_cmsis_depthwise_avx512(p, image, bias, output + (size_t)b * (size_t)p->out_h * (size_t)p->out_w *
                                                            (size_t)p->out_ch);
      continue;
    }
#endif
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      for (int32_t ox = 0; ox < p->out_w; ox++) {
        for (int32_t c0 = 0; c0 < p->cp; c0 += NB) pixel_block(p, image, oy, ox, c0, acc + c0);
        int8_t* out = output + (((size_t)b * (size_t)p->out_h + (size_t)oy) * (size_t)p->out_w + (size_t)ox) *
                                   (size_t)p->out_ch;
        tvmd_cmsis_requantize_bias_s8(acc, bias, p->multiplier, p->shift, p->out_ch, &p->q, out);
      }
    }
  }
  return TVMD_OK;
}
