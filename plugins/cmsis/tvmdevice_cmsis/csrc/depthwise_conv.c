/*
 * DEPTHWISE_CONV_2D, int8 with per-channel weights and any depth multiplier:
 * TFLM's reference_integer_ops::DepthwiseConvPerChannel (CMSIS-NN's
 * arm_depthwise_conv_s8 matches).
 *
 * Integer throughout and without scratch: every output pixel is, per block
 * of TVMD_CMSIS_NB output channels, an int32 sum over the filter taps inside
 * the image of (input + input offset) * weight, read straight from the int8
 * input, then requantized per channel.  Taps outside the image are skipped
 * exactly as the reference skips them.  The weights were packed at compile
 * time as int16 [tap pairs][cp][2]: taps 2p and 2p + 1 of a channel side by
 * side, the operands of one 2 x 16-bit multiply-add (the AVX2 path,
 * simd_x86.c, for depth multiplier 1); channels zero padded to cp.
 */
#include "internal.h"

#define NB TVMD_CMSIS_NB

size_t tvmd_cmsis_depthwise_conv_s8_get_buffer_size(const tvmd_cmsis_depthwise_conv_params_t* p) {
  (void)p;
  return 0;
}

/* Output pixel (oy, ox), channels [c0, c0 + n): the sums over the taps inside
 * the image, requantized into out[c0..). */
TVMD_CMSIS_INLINE void pixel_block(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* restrict image,
                                   const int32_t* restrict bias, int32_t oy, int32_t ox, int32_t c0, int32_t n,
                                   int8_t* restrict out) {
  const int32_t iy0 = oy * p->stride_h - p->pad_h;
  const int32_t ix0 = ox * p->stride_w - p->pad_w;
  const int32_t dm = p->depth_multiplier, offset = p->q.input_offset;
  int32_t acc[NB] = {0};
  for (int32_t fy = 0; fy < p->filter_h; fy++) {
    const int32_t iy = iy0 + fy * p->dilation_h;
    if (iy < 0 || iy >= p->in_h) continue;
    for (int32_t fx = 0; fx < p->filter_w; fx++) {
      const int32_t ix = ix0 + fx * p->dilation_w;
      if (ix < 0 || ix >= p->in_w) continue;
      const int32_t t = fy * p->filter_w + fx;
      const int8_t* restrict x = image + ((size_t)iy * (size_t)p->in_w + (size_t)ix) * (size_t)p->in_ch;
      const int16_t* restrict w = p->weights + ((size_t)(t / 2) * (size_t)p->cp + (size_t)c0) * 2 + (size_t)(t & 1);
      if (dm == 1 && n == NB) {
        /* A constant trip count the compiler vectorizes. */
        for (int32_t j = 0; j < NB; j++) acc[j] += (x[c0 + j] + offset) * w[2 * j];
      } else if (dm == 1) {
        for (int32_t j = 0; j < n; j++) acc[j] += (x[c0 + j] + offset) * w[2 * j];
      } else {
        for (int32_t j = 0; j < n; j++) acc[j] += (x[(c0 + j) / dm] + offset) * w[2 * j];
      }
    }
  }
  /* requantize.c's loop, which the compiler vectorizes. */
  tvmd_cmsis_requantize_bias_s8(acc, bias ? bias + c0 : NULL, p->multiplier + c0, p->shift + c0, n, &p->q, out + c0);
}

TVMD_CMSIS_SIMD
static void depthwise_portable(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* image,
                               const int32_t* bias, int8_t* output) {
  for (int32_t oy = 0; oy < p->out_h; oy++) {
    for (int32_t ox = 0; ox < p->out_w; ox++) {
      int8_t* out = output + ((size_t)oy * (size_t)p->out_w + (size_t)ox) * (size_t)p->out_ch;
      for (int32_t c0 = 0; c0 < p->out_ch; c0 += NB) {
        pixel_block(p, image, bias, oy, ox, c0, tvmd_cmsis_min(NB, p->out_ch - c0), out);
      }
    }
  }
}

int32_t tvmd_cmsis_depthwise_conv_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_depthwise_conv_params_t* p = (const tvmd_cmsis_depthwise_conv_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_DEPTHWISE_CONV) return TVMD_ERR_INVALID_ARGUMENT;
  tvmd_cmsis_weighted_io_t io;
  const int32_t status = tvmd_cmsis_weighted_enter(buffers, p->num_inputs, 0, resource_handle,
                                                   TVMD_CMSIS_KIND_DEPTHWISE_CONV, p->macs, &io);
  if (status != TVMD_OK) return status;
  const size_t in_size = (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
  const size_t out_size = (size_t)p->out_h * (size_t)p->out_w * (size_t)p->out_ch;
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t* image = io.input + (size_t)b * in_size;
    int8_t* output = io.output + (size_t)b * out_size;
#if TVMD_CMSIS_X86
    if (tvmd_cmsis_simd_level() >= TVMD_CMSIS_LEVEL_AVX2 && p->depth_multiplier == 1 &&
        p->filter_h * p->filter_w <= TVMD_CMSIS_DW_MAX_TAPS) {
      tvmd_cmsis_depthwise_avx2(p, image, io.bias, output);
      continue;
    }
#endif
    depthwise_portable(p, image, io.bias, output);
  }
  return TVMD_OK;
}
