/*
 * DEPTHWISE_CONV_2D, int8 with per-channel weights and any depth multiplier:
 * TFLM's reference_integer_ops::DepthwiseConvPerChannel (CMSIS-NN's
 * arm_depthwise_conv_s8 matches).
 *
 * Integer throughout: every output pixel is, per block
 * of TVMD_CMSIS_NB output channels, an int32 sum over the filter taps inside
 * the image of (input + input offset) * weight, read straight from the int8
 * input, then requantized per channel.  Taps outside the image are skipped
 * exactly as the reference skips them.  The weights were packed at compile
 * time as int16 [tap pairs][cp][2]: taps 2p and 2p + 1 of a channel side by
 * side, the operands of one 2 x 16-bit multiply-add (the AVX2 and AVX-512
 * paths, simd_x86_depthwise.c, for depth multiplier 1); channels zero
 * padded to cp.  The portable loops take no scratch; on x86-64 the AVX-512
 * path widens the image's rows into a scratch ring of pair rows
 * (simd_x86_depthwise_rows.c) when it is small enough.
 */
#include "internal.h"

#define NB TVMD_CMSIS_NB
/* Channels whose int32 sums the depth-multiplier-1 loop keeps on the stack. */
#define DW_CHUNK (16 * NB)

size_t tvmd_cmsis_depthwise_conv_s8_get_buffer_size(const tvmd_cmsis_depthwise_conv_params_t* p) {
#if TVMD_CMSIS_X86
  return tvmd_cmsis_depthwise_rows_bytes(p);
#else
  (void)p;
  return 0;
#endif
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

/* Depth multiplier 1, one output pixel's full blocks of NB channels: as the
 * AVX2 path, tap pairs against the pair-interleaved weights, a tap outside
 * the image reading a block of input zero points (which the offset turns
 * into an exact 0: the reference's skipped taps add nothing), so the loop
 * over a block has no branch and a constant trip count the compiler
 * vectorizes.  src[t] is tap t's input pixel, mask[t] ~0 inside the image,
 * 0 outside (then src[t] is the zero points); taps padded to an even count. */
TVMD_CMSIS_INLINE void pixel_blocks_dm1(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* const* src,
                                        const size_t* mask, int32_t pairs, const int32_t* restrict bias,
                                        int8_t* restrict out) {
  const int32_t offset = p->q.input_offset;
  const size_t full = (size_t)p->out_ch / NB * NB;
  for (size_t chunk = 0; chunk < full; chunk += DW_CHUNK) {
    /* A chunk's sums requantized in one call: per block, the call's set-up
     * cost as much as the block's multiply-adds. */
    const size_t end = full - chunk < DW_CHUNK ? full : chunk + DW_CHUNK;
    int32_t acc[DW_CHUNK];
    for (size_t c0 = chunk; c0 < end; c0 += NB) {
      int32_t sums[2 * NB] = {0};
      for (int32_t pr = 0; pr < pairs; pr++) {
        const int8_t* restrict x0 = src[2 * pr] + (c0 & mask[2 * pr]);
        const int8_t* restrict x1 = src[2 * pr + 1] + (c0 & mask[2 * pr + 1]);
        const int16_t* restrict w = p->weights + ((size_t)pr * (size_t)p->cp + c0) * 2;
        for (int32_t j = 0; j < NB; j++) {
          sums[2 * j] += (x0[j] + offset) * w[2 * j];
          sums[2 * j + 1] += (x1[j] + offset) * w[2 * j + 1];
        }
      }
      for (int32_t j = 0; j < NB; j++) acc[c0 - chunk + (size_t)j] = sums[2 * j] + sums[2 * j + 1];
    }
    tvmd_cmsis_requantize_bias_s8(acc, bias ? bias + chunk : NULL, p->multiplier + chunk, p->shift + chunk,
                                  (int32_t)(end - chunk), &p->q, out + chunk);
  }
}

TVMD_CMSIS_SIMD
static void depthwise_portable_dm1(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* image,
                                   const int32_t* bias, int8_t* output) {
  const size_t ch = (size_t)p->in_ch;
  const int32_t taps = p->filter_h * p->filter_w, pairs = (taps + 1) / 2;
  int8_t zero_points[NB];
  for (int j = 0; j < NB; j++) zero_points[j] = (int8_t)-p->q.input_offset;
  const int8_t* src[TVMD_CMSIS_DW_MAX_TAPS + 1];
  size_t mask[TVMD_CMSIS_DW_MAX_TAPS + 1];
  src[2 * pairs - 1] = zero_points; /* an odd last tap's partner (its weights are 0) */
  mask[2 * pairs - 1] = 0;
  for (int32_t oy = 0; oy < p->out_h; oy++) {
    for (int32_t ox = 0; ox < p->out_w; ox++) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
      for (int32_t fy = 0, t = 0; fy < p->filter_h; fy++) {
        const int32_t iy = iy0 + fy * p->dilation_h;
        for (int32_t fx = 0; fx < p->filter_w; fx++, t++) {
          const int32_t ix = ix0 + fx * p->dilation_w;
          const int inside = iy >= 0 && iy < p->in_h && ix >= 0 && ix < p->in_w;
          src[t] = inside ? image + ((size_t)iy * (size_t)p->in_w + (size_t)ix) * ch : zero_points;
          mask[t] = inside ? ~(size_t)0 : 0;
        }
      }
      int8_t* out = output + ((size_t)oy * (size_t)p->out_w + (size_t)ox) * (size_t)p->out_ch;
      pixel_blocks_dm1(p, src, mask, pairs, bias, out);
      for (int32_t c0 = p->out_ch / NB * NB; c0 < p->out_ch; c0 += NB) {
        pixel_block(p, image, bias, oy, ox, c0, p->out_ch - c0, out);
      }
    }
  }
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
  const int with_scratch = tvmd_cmsis_depthwise_conv_s8_get_buffer_size(p) > 0;
  const int32_t status = tvmd_cmsis_weighted_enter(buffers, p->num_inputs, with_scratch, resource_handle,
                                                   TVMD_CMSIS_KIND_DEPTHWISE_CONV, p->macs, &io);
  if (status != TVMD_OK) return status;
  const size_t in_size = (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
  const size_t out_size = (size_t)p->out_h * (size_t)p->out_w * (size_t)p->out_ch;
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t* image = io.input + (size_t)b * in_size;
    int8_t* output = io.output + (size_t)b * out_size;
#if TVMD_CMSIS_X86
    const int level = tvmd_cmsis_simd_level();
    if (level >= TVMD_CMSIS_LEVEL_AVX2 && p->depth_multiplier == 1 &&
        p->filter_h * p->filter_w <= TVMD_CMSIS_DW_MAX_TAPS) {
      if (level == TVMD_CMSIS_LEVEL_AVX512 && io.scratch != NULL) {
        tvmd_cmsis_depthwise_rows_avx512(p, image, io.bias, output, io.scratch,
                                         tvmd_cmsis_vnni_level() == TVMD_CMSIS_LEVEL_AVX512VNNI);
      } else if (level == TVMD_CMSIS_LEVEL_AVX512) {
        tvmd_cmsis_depthwise_avx512(p, image, io.bias, output);
      } else {
        tvmd_cmsis_depthwise_avx2(p, image, io.bias, output);
      }
      continue;
    }
#endif
    if (p->depth_multiplier == 1 && p->filter_h * p->filter_w <= TVMD_CMSIS_DW_MAX_TAPS) {
      depthwise_portable_dm1(p, image, io.bias, output);
    } else {
      depthwise_portable(p, image, io.bias, output);
    }
  }
  return TVMD_OK;
}
