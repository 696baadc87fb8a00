/*
 * DEPTHWISE_CONV_2D for the M-profile packing (-mcpu=cortex-m*): the
 * operands as CMSIS-NN's arm_depthwise_conv_s8 takes them, no scratch
 * (arm_depthwise_conv_s8 needs none).  The int8 filter [1, KH, KW, out_ch]
 * is read in place from the filter buffer (buffers[1]); output channel
 * c * depth_multiplier + m sums the taps inside the image of input channel
 * c, as TFLM's reference DepthwiseConvPerChannel does (the range of taps
 * inside the image is found once per output row and pixel, not per tap).
 *
 * Depth multiplier 1, or one input channel (any depth multiplier: every
 * output channel then reads input channel 0), the common shapes, run a block
 * of output channels of one output pixel at a time, its sums in registers
 * across all taps:
 *  - Helium (MVE), depth multiplier 1: sixteen channels at a time on int16
 *    lanes (dw_block16_mve: VMULLB/VMULLT per eight products); the channels
 *    left over, and one input channel, eight channels on two vectors of four
 *    int32 lanes, a VMUL and a VADD per four products (VMLA by the input
 *    value when it is shared), requantized four lanes at a time; only a last
 *    partial block is predicated.
 *  - DSP: four channels; a word of four inputs widened with the offset by two
 *    SXTAB16, the filter word by two SXTB16, one SMLABB or SMLATT per
 *    product.
 *  - plain C: four channels, one multiply-add per product.
 * Other shapes take the general loop.  Every path is exact in int32, so they
 * agree bit for bit.
 * Integer arithmetic only; the int32 sums cannot overflow (bounded at
 * prepare).
 */
#include "mprofile.h"

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

/* What one output pixel's block loop needs, read once from the params (the
 * int8 output stores could alias them, so the compiler would reload them). */
typedef struct {
  const int8_t* filter;
  const int32_t* bias;
  const int32_t* multiplier;
  const int8_t* shift;
  int32_t out_ch, in_ch, in_w, filter_w, dilation_h, dilation_w, offset, per_channel;
  tvmd_cmsis_quant_t q;
} dw_ctx_t;

/* The output channels [oc, oc + n) of one output pixel: taps fy in [fy0, fy1),
 * fx in [fx0, fx1) of the window at (iy0, ix0). */
typedef struct {
  const int8_t* image;
  int32_t iy0, ix0, fy0, fy1, fx0, fx1;
} dw_window_t;

static inline int8_t dw_output(const dw_ctx_t* c, int32_t acc, int32_t oc) {
  const int32_t k = c->per_channel ? oc : 0;
  return tvmd_cmsis_out_1(acc, c->bias, oc, c->multiplier[k], c->shift[k], c->q.output_offset, c->q.act_min,
                          c->q.act_max);
}

#if TVMD_CMSIS_MVE
/* Four lanes requantized and stored (the first n of them). */
static inline void dw_store_mve(const dw_ctx_t* c, int32x4_t v, int32_t oc, mve_pred16_t live, int8_t* out) {
  if (c->bias != NULL) v = vaddq_s32(v, vldrwq_z_s32(c->bias + oc, live)); /* wraps, as the reference */
  const int32x4_t multiplier = c->per_channel ? vldrwq_z_s32(c->multiplier + oc, live) : vdupq_n_s32(c->multiplier[0]);
  const int32x4_t shift = c->per_channel ? vldrbq_z_s32(c->shift + oc, live) : vdupq_n_s32(c->shift[0]);
  vstrbq_p_s32(out + oc, tvmd_cmsis_clamp_mve(tvmd_cmsis_requantize_mve(v, multiplier, shift), &c->q), live);
}

/* Output channels [oc, oc + 8) (the first n live) of one pixel; bcast: one
 * input channel for all.  Inlined with constant n and bcast where it can be. */
TVMD_CMSIS_INLINE void dw_block_mve(const dw_ctx_t* c, const dw_window_t* w, int32_t oc, int32_t n, int8_t* out,
                                    int bcast) {
  const int32_t lo = n < 4 ? n : 4, hi = n > 4 ? n - 4 : 0;
  const mve_pred16_t m0 = vctp32q((uint32_t)lo), m1 = vctp32q((uint32_t)hi);
  const int32_t offset = c->offset, out_ch = c->out_ch, in_ch = c->in_ch;
  int32x4_t a0 = vdupq_n_s32(0), a1 = a0;
  for (int32_t fy = w->fy0; fy < w->fy1; fy++) {
    const int8_t* row = w->image + (size_t)(w->iy0 + fy * c->dilation_h) * (size_t)c->in_w * (size_t)in_ch;
    const int8_t* taps = c->filter + (size_t)(fy * c->filter_w) * (size_t)out_ch + (size_t)oc;
    for (int32_t fx = w->fx0; fx < w->fx1; fx++) {
      const int8_t* wt = taps + (size_t)fx * (size_t)out_ch;
      const int32_t ix = w->ix0 + fx * c->dilation_w;
      if (bcast) {
        const int32_t x = (int32_t)row[ix] + offset;
        if (n == 8) {
          a0 = vmlaq_n_s32(a0, vldrbq_s32(wt), x);
          a1 = vmlaq_n_s32(a1, vldrbq_s32(wt + 4), x);
        } else {
          a0 = vmlaq_n_s32(a0, vldrbq_z_s32(wt, m0), x);
          a1 = vmlaq_n_s32(a1, vldrbq_z_s32(wt + 4, m1), x);
        }
      } else {
        const int8_t* x = row + (size_t)ix * (size_t)in_ch + (size_t)oc;
        if (n == 8) {
          a0 = vaddq_s32(a0, vmulq_s32(vaddq_n_s32(vldrbq_s32(x), offset), vldrbq_s32(wt)));
          a1 = vaddq_s32(a1, vmulq_s32(vaddq_n_s32(vldrbq_s32(x + 4), offset), vldrbq_s32(wt + 4)));
        } else {
          /* Lanes past n load zero weights and add nothing. */
          a0 = vaddq_s32(a0, vmulq_s32(vaddq_n_s32(vldrbq_z_s32(x, m0), offset), vldrbq_z_s32(wt, m0)));
          a1 = vaddq_s32(a1, vmulq_s32(vaddq_n_s32(vldrbq_z_s32(x + 4, m1), offset), vldrbq_z_s32(wt + 4, m1)));
        }
      }
    }
  }
  dw_store_mve(c, a0, oc, m0, out);
  if (hi > 0) dw_store_mve(c, a1, oc + 4, m1, out);
}

/* Eight requantized channels [oc, oc + 8) from their even (channels oc, oc + 2,
 * ...) and odd lanes, narrowed back into channel order and stored. */
static inline void dw_store8_mve(const dw_ctx_t* c, int32x4_t even, int32x4_t odd, int32_t oc, int8_t* out) {
  const uint32x4_t pairs = vidupq_n_u32(0, 2); /* byte offsets 0, 2, 4, 6 */
  if (c->bias != NULL) {
    const int32x4x2_t b = vld2q_s32(c->bias + oc); /* wraps, as the reference */
    even = vaddq_s32(even, b.val[0]);
    odd = vaddq_s32(odd, b.val[1]);
  }
  int32x4_t m0, m1, s0, s1;
  if (c->per_channel) {
    const int32x4x2_t m = vld2q_s32(c->multiplier + oc);
    m0 = m.val[0];
    m1 = m.val[1];
    s0 = vldrbq_gather_offset_s32(c->shift + oc, pairs);
    s1 = vldrbq_gather_offset_s32(c->shift + oc + 1, pairs);
  } else {
    m0 = m1 = vdupq_n_s32(c->multiplier[0]);
    s0 = s1 = vdupq_n_s32(c->shift[0]);
  }
  even = tvmd_cmsis_clamp_mve(tvmd_cmsis_requantize_mve(even, m0, s0), &c->q);
  odd = tvmd_cmsis_clamp_mve(tvmd_cmsis_requantize_mve(odd, m1, s1), &c->q);
  int16x8_t v = vreinterpretq_s16_s32(even);
  v = vmovnbq_s32(v, even);
  v = vmovntq_s32(v, odd);
  vstrbq_s16(out + oc, v);
}

/* Output channels [oc, oc + 16) of one pixel, depth multiplier 1.  Inputs
 * (with the offset) and weights widened to int16 lanes, whose products fit
 * (|x + offset| <= 255, |w| <= 128); VMULLB / VMULLT multiply the even and the
 * odd lanes into int32, so each tap costs 4 loads, 2 offset additions, 4
 * multiplies and 4 additions for 16 products. */
TVMD_CMSIS_INLINE void dw_block16_mve(const dw_ctx_t* c, const dw_window_t* w, int32_t oc, int8_t* out) {
  const int16_t offset = (int16_t)c->offset;
  const int32_t in_ch = c->in_ch;
  const size_t row_step = (size_t)c->in_w * (size_t)in_ch;
  int32x4_t e0 = vdupq_n_s32(0), o0 = e0, e1 = e0, o1 = e0;
  const int32_t taps_x = w->fx1 - w->fx0;
  const size_t x_step = (size_t)c->dilation_w * (size_t)in_ch;
  for (int32_t fy = w->fy0; fy < w->fy1; fy++) {
    const int8_t* x = w->image + (size_t)(w->iy0 + fy * c->dilation_h) * row_step +
                      (size_t)(w->ix0 + w->fx0 * c->dilation_w) * (size_t)in_ch + (size_t)oc;
    const int8_t* wt = c->filter + (size_t)(fy * c->filter_w + w->fx0) * (size_t)c->out_ch + (size_t)oc;
    for (int32_t t = 0; t < taps_x; t++) {
      /* One half at a time: four sums and three temporaries fit the eight Q registers. */
      int16x8_t xv = vaddq_n_s16(vldrbq_s16(x), offset), wv = vldrbq_s16(wt);
      e0 = vaddq_s32(e0, vmullbq_int_s16(xv, wv));
      o0 = vaddq_s32(o0, vmulltq_int_s16(xv, wv));
      xv = vaddq_n_s16(vldrbq_s16(x + 8), offset);
      wv = vldrbq_s16(wt + 8);
      e1 = vaddq_s32(e1, vmullbq_int_s16(xv, wv));
      o1 = vaddq_s32(o1, vmulltq_int_s16(xv, wv));
      x += x_step;
      wt += c->out_ch;
    }
  }
  dw_store8_mve(c, e0, o0, oc, out);
  dw_store8_mve(c, e1, o1, oc + 8, out);
}
#define TVMD_DW_BLOCK 8
#define TVMD_DW_RUN dw_block_mve
#else
/* Output channels [oc, oc + 4) (the first n live) of one pixel; bcast: one
 * input channel for all.  Inlined with constant n and bcast where it can be. */
TVMD_CMSIS_INLINE void dw_block(const dw_ctx_t* c, const dw_window_t* w, int32_t oc, int32_t n, int8_t* out,
                                int bcast) {
  const int32_t offset = c->offset, out_ch = c->out_ch, in_ch = c->in_ch;
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
#if TVMD_CMSIS_DSP
  /* Both halves of a word hold the offset; x + offset fits int16 (|.| <= 255). */
  const uint32_t offsets = ((uint32_t)offset & 0xFFFFu) | ((uint32_t)offset << 16);
#endif
  for (int32_t fy = w->fy0; fy < w->fy1; fy++) {
    const int8_t* row = w->image + (size_t)(w->iy0 + fy * c->dilation_h) * (size_t)c->in_w * (size_t)in_ch;
    const int8_t* taps = c->filter + (size_t)(fy * c->filter_w) * (size_t)out_ch + (size_t)oc;
    for (int32_t fx = w->fx0; fx < w->fx1; fx++) {
      const int8_t* wt = taps + (size_t)fx * (size_t)out_ch;
      const int32_t ix = w->ix0 + fx * c->dilation_w;
      const int8_t* x = bcast ? row + ix : row + (size_t)ix * (size_t)in_ch + (size_t)oc;
      if (n == 4) {
#if TVMD_CMSIS_DSP
        const uint32_t ww = tvmd_cmsis_read_s8x4(wt), w02 = __sxtb16(ww), w13 = __sxtb16(ww >> 8);
        uint32_t x02, x13;
        if (bcast) {
          x02 = x13 = ((uint32_t)((int32_t)*x + offset) & 0xFFFFu) * 0x10001u;
        } else {
          const uint32_t xw = tvmd_cmsis_read_s8x4(x);
          x02 = __sxtab16(offsets, xw);
          x13 = __sxtab16(offsets, xw >> 8);
        }
        a0 = __smlabb(x02, w02, a0);
        a2 = __smlatt(x02, w02, a2);
        a1 = __smlabb(x13, w13, a1);
        a3 = __smlatt(x13, w13, a3);
#else
        const int32_t s = bcast ? 0 : 1;
        a0 += ((int32_t)x[0] + offset) * (int32_t)wt[0];
        a1 += ((int32_t)x[s] + offset) * (int32_t)wt[1];
        a2 += ((int32_t)x[2 * s] + offset) * (int32_t)wt[2];
        a3 += ((int32_t)x[3 * s] + offset) * (int32_t)wt[3];
#endif
      } else {
        const int32_t s = bcast ? 0 : 1;
        a0 += ((int32_t)x[0] + offset) * (int32_t)wt[0];
        if (n > 1) a1 += ((int32_t)x[s] + offset) * (int32_t)wt[1];
        if (n > 2) a2 += ((int32_t)x[2 * s] + offset) * (int32_t)wt[2];
      }
    }
  }
  out[oc] = dw_output(c, a0, oc);
  if (n > 1) out[oc + 1] = dw_output(c, a1, oc + 1);
  if (n > 2) out[oc + 2] = dw_output(c, a2, oc + 2);
  if (n > 3) out[oc + 3] = dw_output(c, a3, oc + 3);
}
#define TVMD_DW_BLOCK 4
#define TVMD_DW_RUN dw_block
#endif

/* Depth multiplier 1 or one input channel: blocks of output channels. */
static void depthwise_blocks(const tvmd_cmsis_depthwise_conv_m_params_t* p, const tvmd_cmsis_weighted_io_t* io) {
  const dw_ctx_t c = {io->filter, io->bias, p->multiplier, p->shift, p->out_ch, p->in_ch, p->in_w, p->filter_w,
                      p->dilation_h, p->dilation_w, p->q.input_offset, p->per_channel, p->q};
  const int32_t out_h = p->out_h, out_w = p->out_w, out_ch = p->out_ch;
  const size_t in_image = (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
  int8_t* out = io->output;
  for (int32_t b = 0; b < p->batches; b++) {
    dw_window_t w;
    w.image = io->input + (size_t)b * in_image;
    for (int32_t oy = 0; oy < out_h; oy++) {
      w.iy0 = oy * p->stride_h - p->pad_h;
      tap_range(w.iy0, p->dilation_h, p->filter_h, p->in_h, &w.fy0, &w.fy1);
      for (int32_t ox = 0; ox < out_w; ox++) {
        w.ix0 = ox * p->stride_w - p->pad_w;
        tap_range(w.ix0, p->dilation_w, p->filter_w, p->in_w, &w.fx0, &w.fx1);
        int32_t oc0 = 0;
#if TVMD_CMSIS_MVE
        if (c.in_ch != 1) {
          for (; oc0 + 16 <= out_ch; oc0 += 16) dw_block16_mve(&c, &w, oc0, out);
        }
#endif
        for (int32_t oc = oc0; oc < out_ch; oc += TVMD_DW_BLOCK) {
          const int32_t n = out_ch - oc < TVMD_DW_BLOCK ? out_ch - oc : TVMD_DW_BLOCK;
          /* Each case its own copy of the loop: the common ones with constants. */
          if (c.in_ch == 1) {
            if (n == TVMD_DW_BLOCK) TVMD_DW_RUN(&c, &w, oc, TVMD_DW_BLOCK, out, 1);
            else TVMD_DW_RUN(&c, &w, oc, n, out, 1);
          } else {
            if (n == TVMD_DW_BLOCK) TVMD_DW_RUN(&c, &w, oc, TVMD_DW_BLOCK, out, 0);
            else TVMD_DW_RUN(&c, &w, oc, n, out, 0);
          }
        }
        out += out_ch;
      }
    }
  }
}

int32_t tvmd_cmsis_depthwise_conv_m_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_depthwise_conv_m_params_t* p = (const tvmd_cmsis_depthwise_conv_m_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_DEPTHWISE_CONV_M) return TVMD_ERR_INVALID_ARGUMENT;
  tvmd_cmsis_weighted_io_t io;
  const int32_t status = tvmd_cmsis_weighted_enter(buffers, p->num_inputs, 0, resource_handle,
                                                   TVMD_CMSIS_KIND_DEPTHWISE_CONV, p->macs, &io);
  if (status != TVMD_OK) return status;
  if (io.filter == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (p->depth_multiplier == 1 || p->in_ch == 1) {
    depthwise_blocks(p, &io);
    return TVMD_OK;
  }

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
