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
 *  - Helium (MVE), depth multiplier 1 and several channels: the output
 *    walked column by column, up to four pixels stacked along y that take
 *    the same taps at a time (dw_column_mve), four channels on int32 lanes:
 *    each weights load serves the four pixels, the input offset enters once
 *    as offset * sum(w); only a last partial four channels is predicated.
 *    Three pixels whose windows take all three tap rows (stride 1,
 *    undilated along y, up to 64 channels) slide instead (dw_slide3_mve):
 *    per tap column the three weights stay in registers and each of the five
 *    input rows is loaded once for every pixel it serves, the offset and
 *    bias terms taken once per output column; with GCC that loop is
 *    assembly (the compiler spilled its eight vectors).
 *    One input channel: eight channels on two vectors of four int32 lanes,
 *    a VMLA by the shared input value per four products.
 *  - DSP: one pixel's channels four at a time in an out-of-line loop
 *    (dw_pixel_dsp); a word of four inputs widened with the offset by two
 *    SXTAB16, the filter word by two SXTB16, one SMLABB or SMLATT per
 *    product.  One input channel: eight channels per input value
 *    (dw_pixel_one_dsp).  The channels left over take the block loop.
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

/* Output channels [oc, oc + 8) (the first n live) of one pixel of a one
 * input channel depthwise (bcast is always 1 here: the signature is the DSP
 * and plain C block's).  Inlined with constant n where it can be. */
TVMD_CMSIS_INLINE void dw_block_mve(const dw_ctx_t* c, const dw_window_t* w, int32_t oc, int32_t n, int8_t* out,
                                    int bcast) {
  const int32_t lo = n < 4 ? n : 4, hi = n > 4 ? n - 4 : 0;
  const mve_pred16_t m0 = vctp32q((uint32_t)lo), m1 = vctp32q((uint32_t)hi);
  const int32_t offset = c->offset, out_ch = c->out_ch, in_ch = c->in_ch;
  int32x4_t a0 = vdupq_n_s32(0), a1 = a0;
  (void)bcast;
  for (int32_t fy = w->fy0; fy < w->fy1; fy++) {
    const int8_t* row = w->image + (size_t)(w->iy0 + fy * c->dilation_h) * (size_t)c->in_w * (size_t)in_ch;
    const int8_t* taps = c->filter + (size_t)(fy * c->filter_w) * (size_t)out_ch + (size_t)oc;
    for (int32_t fx = w->fx0; fx < w->fx1; fx++) {
      const int8_t* wt = taps + (size_t)fx * (size_t)out_ch;
      const int32_t ix = w->ix0 + fx * c->dilation_w;
      const int32_t x = (int32_t)row[ix] + offset;
      if (n == 8) {
        a0 = vmlaq_n_s32(a0, vldrbq_s32(wt), x);
        a1 = vmlaq_n_s32(a1, vldrbq_s32(wt + 4), x);
      } else {
        /* Lanes past n load zero weights and add nothing. */
        a0 = vmlaq_n_s32(a0, vldrbq_z_s32(wt, m0), x);
        a1 = vmlaq_n_s32(a1, vldrbq_z_s32(wt + 4, m1), x);
      }
    }
  }
  dw_store_mve(c, a0, oc, m0, out);
  if (hi > 0) dw_store_mve(c, a1, oc + 4, m1, out);
}

/* The pixels of one column block (dw_column_mve): up to four output pixels
 * stacked along y at one x, whose windows take the same taps, so every
 * weights load serves all of them. */
typedef struct {
  const int8_t* x;      /* input of the first pixel's first tap, channel 0 */
  const int8_t* w;      /* filter at the first tap, channel 0 */
  size_t pixel_step;    /* input bytes from one pixel of the block to the next */
  size_t row_step;      /* input bytes from one tap row to the next */
  size_t tap_step;      /* input bytes from one tap to the next along x */
  size_t out_step;      /* output bytes from one pixel of the block to the next */
  int32_t taps_y, taps_x;
} dw_column_t;

/* Output channels [oc, oc + 4) (lanes past `live` masked) of `npix` pixels of
 * a column block, depth multiplier 1, on int32 lanes: per tap one weights
 * load, one VADD into the weights sum, and a load, a VMUL and a VADD per pixel
 * (MVE has no vector-by-vector VMLA).  The input offset enters at the end
 * as offset * sum(w) over the taps taken (exact: sum((x + offset) * w) =
 * sum(x * w) + offset * sum(w), bounded at prepare).  Inlined with constant
 * npix and full. */
TVMD_CMSIS_INLINE void dw_column_mve(const dw_ctx_t* c, const dw_column_t* k, int32_t oc, int32_t npix, int full,
                                     mve_pred16_t live, int8_t* out) {
  const int8_t* w_row = k->w + oc;
  const int8_t* x_row = k->x + oc;
  const size_t ps = k->pixel_step, out_ch = (size_t)c->out_ch, tap_step = k->tap_step;
  int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0, ws = a0;
  for (int32_t fy = 0; fy < k->taps_y; fy++) {
    const int8_t *x0 = x_row, *x1 = x0 + ps, *x2 = x1 + ps, *x3 = x2 + ps;
    const int8_t* w = w_row;
    for (int32_t t = 0; t < k->taps_x; t++) {
      const int32x4_t wv = full ? vldrbq_s32(w) : vldrbq_z_s32(w, live);
      ws = vaddq_s32(ws, wv);
      a0 = vaddq_s32(a0, vmulq_s32(full ? vldrbq_s32(x0) : vldrbq_z_s32(x0, live), wv));
      if (npix > 1) a1 = vaddq_s32(a1, vmulq_s32(full ? vldrbq_s32(x1) : vldrbq_z_s32(x1, live), wv));
      if (npix > 2) a2 = vaddq_s32(a2, vmulq_s32(full ? vldrbq_s32(x2) : vldrbq_z_s32(x2, live), wv));
      if (npix > 3) a3 = vaddq_s32(a3, vmulq_s32(full ? vldrbq_s32(x3) : vldrbq_z_s32(x3, live), wv));
      w += out_ch;
      x0 += tap_step;
      x1 += tap_step;
      x2 += tap_step;
      x3 += tap_step;
    }
    x_row += k->row_step;
    w_row += (size_t)c->filter_w * out_ch;
  }
  /* The offset term and the bias (wrapping, as the reference), once for all pixels. */
  int32x4_t base = vmulq_n_s32(ws, c->offset);
  if (c->bias != NULL) base = vaddq_s32(base, vldrwq_z_s32(c->bias + oc, live));
  const int32x4_t m = c->per_channel ? vldrwq_z_s32(c->multiplier + oc, live) : vdupq_n_s32(c->multiplier[0]);
  const int32x4_t sh = c->per_channel ? vldrbq_z_s32(c->shift + oc, live) : vdupq_n_s32(c->shift[0]);
  out += oc;
#define TVMD_DW_COLUMN_STORE(a, i)                                                                  \
  do {                                                                                              \
    const int32x4_t v = tvmd_cmsis_clamp_mve(tvmd_cmsis_requantize_mve(vaddq_s32(a, base), m, sh), &c->q); \
    if (full) vstrbq_s32(out + (i) * k->out_step, v);                                               \
    else vstrbq_p_s32(out + (i) * k->out_step, v, live);                                            \
  } while (0)
  TVMD_DW_COLUMN_STORE(a0, 0);
  if (npix > 1) TVMD_DW_COLUMN_STORE(a1, 1);
  if (npix > 2) TVMD_DW_COLUMN_STORE(a2, 2);
  if (npix > 3) TVMD_DW_COLUMN_STORE(a3, 3);
#undef TVMD_DW_COLUMN_STORE
}

/* Every channel of one column block of npix pixels: four at a time, the last
 * partial four predicated. */
TVMD_CMSIS_INLINE void dw_column_all_mve(const dw_ctx_t* c, const dw_column_t* k, int32_t npix, int8_t* out) {
  int32_t oc = 0;
  for (; oc + 4 <= c->out_ch; oc += 4) dw_column_mve(c, k, oc, npix, 1, 0xFFFF, out);
  if (oc < c->out_ch) dw_column_mve(c, k, oc, npix, 0, vctp32q((uint32_t)(c->out_ch - oc)), out);
}

/* The channels the sliding blocks take their offset and bias terms for at
 * once (int32 on the stack, per output column). */
#define TVMD_DW_SLIDE_CHANNELS 64

/* Output channels [oc, oc + 4) (lanes past `live` masked) of three pixels
 * stacked along y (stride 1, undilated along y) whose windows take all three
 * tap rows: per tap column the three weights vectors stay in registers and
 * each of the five input rows is loaded once for every pixel whose window
 * holds it (9 products from 8 loads, against 9 from 12).  The offset and the
 * bias come in `base` (offset * sum(w) + bias over the taps taken, the same
 * for every such block of the column).  Inlined with constant full. */
TVMD_CMSIS_INLINE void dw_slide3_mve(const dw_ctx_t* c, const dw_column_t* k, int32_t oc, int full,
                                     mve_pred16_t live, const int32_t* base, int8_t* out) {
  const size_t rs = k->pixel_step, ts = k->tap_step, out_ch = (size_t)c->out_ch;
  const size_t w_row = (size_t)c->filter_w * out_ch;
  const int8_t* x0 = k->x + oc;
  const int8_t *x1 = x0 + rs, *x2 = x1 + rs, *x3 = x2 + rs, *x4 = x3 + rs;
  const int8_t* w0 = k->w + oc;
  const int8_t *w1 = w0 + w_row, *w2 = w1 + w_row;
  int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0;
#if defined(__GNUC__) && !defined(__clang__)
  if (full) {
    /* GCC's scheduler spills this loop's eight vectors: written out, with
     * the sums in q0-q2, the weights in q3-q5, an input row in q6 (the
     * widening loads take low registers, so the eight pointers are r0-r7). */
    int32_t sums[12];
    __asm__ volatile(
        "   vmov.i32 q0, #0\n"
        "   vmov.i32 q1, #0\n"
        "   vmov.i32 q2, #0\n"
        "   wls     lr, %[n], 2f\n"
        "1: vldrb.s32 q3, [%[w0]]\n"
        "   vldrb.s32 q4, [%[w1]]\n"
        "   vldrb.s32 q5, [%[w2]]\n"
        "   vldrb.s32 q6, [%[x0]]\n"
        "   vmul.i32 q7, q6, q3\n"
        "   vadd.i32 q0, q0, q7\n"
        "   vldrb.s32 q6, [%[x1]]\n"
        "   vmul.i32 q7, q6, q4\n"
        "   vadd.i32 q0, q0, q7\n"
        "   vmul.i32 q7, q6, q3\n"
        "   vadd.i32 q1, q1, q7\n"
        "   vldrb.s32 q6, [%[x2]]\n"
        "   vmul.i32 q7, q6, q5\n"
        "   vadd.i32 q0, q0, q7\n"
        "   vmul.i32 q7, q6, q4\n"
        "   vadd.i32 q1, q1, q7\n"
        "   vmul.i32 q7, q6, q3\n"
        "   vadd.i32 q2, q2, q7\n"
        "   vldrb.s32 q6, [%[x3]]\n"
        "   vmul.i32 q7, q6, q5\n"
        "   vadd.i32 q1, q1, q7\n"
        "   vmul.i32 q7, q6, q4\n"
        "   vadd.i32 q2, q2, q7\n"
        "   vldrb.s32 q6, [%[x4]]\n"
        "   vmul.i32 q7, q6, q5\n"
        "   vadd.i32 q2, q2, q7\n"
        "   add     %[w0], %[w0], %[ws]\n"
        "   add     %[w1], %[w1], %[ws]\n"
        "   add     %[w2], %[w2], %[ws]\n"
        "   add     %[x0], %[x0], %[xs]\n"
        "   add     %[x1], %[x1], %[xs]\n"
        "   add     %[x2], %[x2], %[xs]\n"
        "   add     %[x3], %[x3], %[xs]\n"
        "   add     %[x4], %[x4], %[xs]\n"
        "   le      lr, 1b\n"
        "2: vstrw.32 q0, [%[s]]\n"
        "   vstrw.32 q1, [%[s], #16]\n"
        "   vstrw.32 q2, [%[s], #32]\n"
        : [w0] "+l"(w0), [w1] "+l"(w1), [w2] "+l"(w2), [x0] "+l"(x0), [x1] "+l"(x1), [x2] "+l"(x2), [x3] "+l"(x3),
          [x4] "+l"(x4)
        : [n] "r"(k->taps_x), [ws] "r"(out_ch), [xs] "r"(ts), [s] "r"(sums)
        : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "lr", "memory");
    a0 = vldrwq_s32(sums);
    a1 = vldrwq_s32(sums + 4);
    a2 = vldrwq_s32(sums + 8);
  } else
#endif
  {
#define TVMD_DW_LOAD(ptr) (full ? vldrbq_s32(ptr) : vldrbq_z_s32(ptr, live))
    for (int32_t t = k->taps_x; t > 0; t--) {
      const int32x4_t u0 = TVMD_DW_LOAD(w0), u1 = TVMD_DW_LOAD(w1), u2 = TVMD_DW_LOAD(w2);
      int32x4_t v = TVMD_DW_LOAD(x0);
      a0 = vaddq_s32(a0, vmulq_s32(v, u0));
      v = TVMD_DW_LOAD(x1);
      a0 = vaddq_s32(a0, vmulq_s32(v, u1));
      a1 = vaddq_s32(a1, vmulq_s32(v, u0));
      v = TVMD_DW_LOAD(x2);
      a0 = vaddq_s32(a0, vmulq_s32(v, u2));
      a1 = vaddq_s32(a1, vmulq_s32(v, u1));
      a2 = vaddq_s32(a2, vmulq_s32(v, u0));
      v = TVMD_DW_LOAD(x3);
      a1 = vaddq_s32(a1, vmulq_s32(v, u2));
      a2 = vaddq_s32(a2, vmulq_s32(v, u1));
      v = TVMD_DW_LOAD(x4);
      a2 = vaddq_s32(a2, vmulq_s32(v, u2));
      w0 += out_ch;
      w1 += out_ch;
      w2 += out_ch;
      x0 += ts;
      x1 += ts;
      x2 += ts;
      x3 += ts;
      x4 += ts;
    }
#undef TVMD_DW_LOAD
  }
  const int32x4_t b = full ? vldrwq_s32(base + oc) : vldrwq_z_s32(base + oc, live);
  const int32x4_t m = c->per_channel ? vldrwq_z_s32(c->multiplier + oc, live) : vdupq_n_s32(c->multiplier[0]);
  const int32x4_t sh = c->per_channel ? vldrbq_z_s32(c->shift + oc, live) : vdupq_n_s32(c->shift[0]);
  out += oc;
#define TVMD_DW_SLIDE_STORE(a, i)                                                                  \
  do {                                                                                             \
    const int32x4_t v = tvmd_cmsis_clamp_mve(tvmd_cmsis_requantize_mve(vaddq_s32(a, b), m, sh), &c->q); \
    if (full) vstrbq_s32(out + (i) * k->out_step, v);                                              \
    else vstrbq_p_s32(out + (i) * k->out_step, v, live);                                           \
  } while (0)
  TVMD_DW_SLIDE_STORE(a0, 0);
  TVMD_DW_SLIDE_STORE(a1, 1);
  TVMD_DW_SLIDE_STORE(a2, 2);
#undef TVMD_DW_SLIDE_STORE
}

/* base[c] = offset * sum(w) + bias (wrapping, as the reference) over the
 * taps of every filter row in the filter columns a column block takes
 * (k->taps_x of them from k->w), for every channel. */
static void dw_slide_base(const dw_ctx_t* c, const dw_column_t* k, int32_t filter_h, int32_t* base) {
  const size_t out_ch = (size_t)c->out_ch;
  for (int32_t oc = 0; oc < c->out_ch; oc += 4) {
    const mve_pred16_t live = vctp32q((uint32_t)(c->out_ch - oc));
    int32x4_t ws = vdupq_n_s32(0);
    for (int32_t fy = 0; fy < filter_h; fy++) {
      const int8_t* w = k->w + (size_t)fy * (size_t)c->filter_w * out_ch + oc;
      for (int32_t t = 0; t < k->taps_x; t++, w += out_ch) ws = vaddq_s32(ws, vldrbq_z_s32(w, live));
    }
    int32x4_t v = vmulq_n_s32(ws, c->offset);
    if (c->bias != NULL) v = vaddq_s32(v, vldrwq_z_s32(c->bias + oc, live));
    vstrwq_p_s32(base + oc, v, live);
  }
}

/* Depth multiplier 1 with several channels: the output walked column by
 * column (one x at a time), its pixels in blocks of up to four consecutive
 * rows whose windows take the same taps (all of them away from the top and
 * bottom edges). */
static void depthwise_columns_mve(const tvmd_cmsis_depthwise_conv_m_params_t* p, const dw_ctx_t* c,
                                  const tvmd_cmsis_weighted_io_t* io) {
  const int32_t out_h = p->out_h, out_w = p->out_w, out_ch = p->out_ch, in_ch = p->in_ch;
  const size_t in_row = (size_t)p->in_w * (size_t)in_ch;
  const size_t in_image = (size_t)p->in_h * in_row;
  dw_column_t k;
  k.pixel_step = (size_t)p->stride_h * in_row;
  k.row_step = (size_t)p->dilation_h * in_row;
  k.tap_step = (size_t)p->dilation_w * (size_t)in_ch;
  k.out_step = (size_t)out_w * (size_t)out_ch;
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t* image = io->input + (size_t)b * in_image;
    int8_t* out_image = io->output + (size_t)b * (size_t)out_h * k.out_step;
    for (int32_t ox = 0; ox < out_w; ox++) {
      const int32_t ix0 = ox * p->stride_w - p->pad_w;
      int32_t fx0, fx1;
      tap_range(ix0, p->dilation_w, p->filter_w, p->in_w, &fx0, &fx1);
      k.taps_x = fx1 - fx0;
      /* Sliding blocks (dw_slide3_mve): three tap rows, stride 1 and undilated
       * along y, the column's offset and bias terms on the stack. */
      int32_t base[TVMD_DW_SLIDE_CHANNELS];
      const int slide = p->filter_h == 3 && p->stride_h == 1 && p->dilation_h == 1 && out_ch <= TVMD_DW_SLIDE_CHANNELS &&
                        k.taps_x > 0;
      if (slide) {
        k.w = c->filter + (size_t)fx0 * (size_t)out_ch;
        dw_slide_base(c, &k, 3, base);
      }
      for (int32_t oy = 0; oy < out_h;) {
        const int32_t iy0 = oy * p->stride_h - p->pad_h;
        int32_t fy0, fy1, npix = 1;
        tap_range(iy0, p->dilation_h, p->filter_h, p->in_h, &fy0, &fy1);
        if (slide && fy0 == 0 && fy1 == 3 && oy + 2 < out_h && iy0 + 4 < p->in_h) {
          /* Three pixels whose windows take every tap row. */
          k.x = image + (size_t)iy0 * in_row + (size_t)(ix0 + fx0 * p->dilation_w) * (size_t)in_ch;
          k.w = c->filter + (size_t)fx0 * (size_t)out_ch;
          int8_t* out = out_image + (size_t)oy * k.out_step + (size_t)ox * (size_t)out_ch;
          int32_t oc = 0;
          for (; oc + 4 <= out_ch; oc += 4) dw_slide3_mve(c, &k, oc, 1, 0xFFFF, base, out);
          if (oc < out_ch) dw_slide3_mve(c, &k, oc, 0, vctp32q((uint32_t)(out_ch - oc)), base, out);
          oy += 3;
          continue;
        }
        while (npix < 4 && oy + npix < out_h) {
          int32_t a, z;
          tap_range(iy0 + npix * p->stride_h, p->dilation_h, p->filter_h, p->in_h, &a, &z);
          if (a != fy0 || z != fy1) break;
          npix++;
        }
        k.taps_y = fy1 - fy0;
        /* Addresses formed only for a window with taps (an empty one reads nothing). */
        k.x = image;
        k.w = c->filter;
        if (k.taps_y > 0 && k.taps_x > 0) {
          k.x = image + (size_t)(iy0 + fy0 * p->dilation_h) * in_row +
                (size_t)(ix0 + fx0 * p->dilation_w) * (size_t)in_ch;
          k.w = c->filter + (size_t)(fy0 * p->filter_w + fx0) * (size_t)out_ch;
        }
        int8_t* out = out_image + (size_t)oy * k.out_step + (size_t)ox * (size_t)out_ch;
        switch (npix) {
          case 4: dw_column_all_mve(c, &k, 4, out); break;
          case 3: dw_column_all_mve(c, &k, 3, out); break;
          case 2: dw_column_all_mve(c, &k, 2, out); break;
          default: dw_column_all_mve(c, &k, 1, out); break;
        }
        oy += npix;
      }
    }
  }
}
#define TVMD_DW_BLOCK 8
#define TVMD_DW_RUN dw_block_mve
#else
#if TVMD_CMSIS_DSP
/* One output pixel of a depth multiplier 1 depthwise for the DSP path: its
 * window's first tap (input x, filter w, channel 0), its taps, the steps
 * between them (bytes) and where its output goes. */
typedef struct {
  const int8_t* x;
  const int8_t* w;
  int8_t* out;
  int32_t taps_y, taps_x;
  size_t x_tap, w_tap, x_row, w_row;
} dw_pixel_t;

/* The first (out_ch & ~3) channels of one pixel, four at a time: per tap two
 * word loads, the four inputs widened with the offset by two SXTAB16 and the
 * weights by two SXTB16 (the odd bytes through the rotation built into
 * them), one SMLABB or SMLATT per product; then the four outputs.  Out of
 * line and in this order, so the tap loop keeps every value in a register. */
TVMD_CMSIS_KEEP_ORDER __attribute__((noinline)) static void dw_pixel_dsp(const dw_ctx_t* c, const dw_pixel_t* px) {
  const uint32_t offsets = ((uint32_t)c->offset & 0xFFFFu) * 0x10001u; /* x + offset fits int16 */
  const int32_t channels = c->out_ch & ~3, taps_y = px->taps_y, taps_x = px->taps_x;
  const size_t x_tap = px->x_tap, w_tap = px->w_tap, x_row = px->x_row, w_row = px->w_row;
  int8_t* out = px->out;
  /* Read once: the int8 stores could alias the context for the compiler. */
  const int32_t* bias = c->bias;
  const int32_t* multiplier = c->multiplier;
  const int8_t* shift = c->shift;
  const int32_t qstep = c->per_channel ? 1 : 0, output_offset = c->q.output_offset;
  const int32_t act_min = c->q.act_min, act_max = c->q.act_max;
  const int int8_range = act_min == INT8_MIN && act_max == INT8_MAX;
  for (int32_t oc = 0; oc < channels; oc += 4) {
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    const int8_t* x = px->x + oc;
    const int8_t* w = px->w + oc;
#define TVMD_DW_TAP_DSP(xp, wp)                                                      \
  do {                                                                               \
    const uint32_t xw = tvmd_cmsis_read_s8x4(xp), ww = tvmd_cmsis_read_s8x4(wp);     \
    uint32_t xv = __sxtab16(offsets, xw), wv = __sxtb16(ww);                         \
    a0 = __smlabb(xv, wv, a0);                                                       \
    a2 = __smlatt(xv, wv, a2);                                                       \
    xv = tvmd_cmsis_sxtab16_ror8(offsets, xw);                                       \
    wv = tvmd_cmsis_sxtb16_ror8(ww);                                                 \
    a1 = __smlabb(xv, wv, a1);                                                       \
    a3 = __smlatt(xv, wv, a3);                                                       \
  } while (0)
    for (int32_t fy = taps_y; fy > 0; fy--) {
      if (taps_x == 3) {
        /* The common row of three taps, straight through. */
        TVMD_DW_TAP_DSP(x, w);
        TVMD_DW_TAP_DSP(x + x_tap, w + w_tap);
        TVMD_DW_TAP_DSP(x + 2 * x_tap, w + 2 * w_tap);
      } else {
        const int8_t* xp = x;
        const int8_t* wp = w;
        for (int32_t t = taps_x; t > 0; t--) {
          TVMD_DW_TAP_DSP(xp, wp);
          xp += x_tap;
          wp += w_tap;
        }
      }
      x += x_row;
      w += w_row;
    }
#undef TVMD_DW_TAP_DSP
#define TVMD_DW_VALUE_DSP(a, j) \
  tvmd_cmsis_out_value(a, bias, oc + (j), multiplier[(oc + (j)) * qstep], shift[(oc + (j)) * qstep], output_offset)
    if (int8_range) {
      out[oc] = tvmd_cmsis_clamp_s8(TVMD_DW_VALUE_DSP(a0, 0));
      out[oc + 1] = tvmd_cmsis_clamp_s8(TVMD_DW_VALUE_DSP(a1, 1));
      out[oc + 2] = tvmd_cmsis_clamp_s8(TVMD_DW_VALUE_DSP(a2, 2));
      out[oc + 3] = tvmd_cmsis_clamp_s8(TVMD_DW_VALUE_DSP(a3, 3));
    } else {
      const int32_t v[4] = {TVMD_DW_VALUE_DSP(a0, 0), TVMD_DW_VALUE_DSP(a1, 1), TVMD_DW_VALUE_DSP(a2, 2),
                            TVMD_DW_VALUE_DSP(a3, 3)};
      for (int32_t j = 0; j < 4; j++) out[oc + j] = (int8_t)(v[j] < act_min ? act_min : v[j] > act_max ? act_max : v[j]);
    }
#undef TVMD_DW_VALUE_DSP
  }
}

/* The first (out_ch & ~7) channels of one pixel of a one input channel
 * depthwise, eight at a time: per tap the input value with its offset once
 * (it fits the bottom half of a word), two filter words widened by SXTB16,
 * one SMLABB or SMLABT per product. */
TVMD_CMSIS_KEEP_ORDER __attribute__((noinline)) static void dw_pixel_one_dsp(const dw_ctx_t* c, const dw_pixel_t* px) {
  const int32_t offset = c->offset, channels = c->out_ch & ~7, taps_y = px->taps_y, taps_x = px->taps_x;
  const size_t x_tap = px->x_tap, w_tap = px->w_tap, x_row = px->x_row, w_row = px->w_row;
  int8_t* out = px->out;
  /* Read once: the int8 stores could alias the context for the compiler. */
  const int32_t* bias = c->bias;
  const int32_t* multiplier = c->multiplier;
  const int8_t* shift = c->shift;
  const int32_t qstep = c->per_channel ? 1 : 0, output_offset = c->q.output_offset;
  const int32_t act_min = c->q.act_min, act_max = c->q.act_max;
  const int int8_range = act_min == INT8_MIN && act_max == INT8_MAX;
  for (int32_t oc = 0; oc < channels; oc += 8) {
    int32_t a[8];
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
    const int8_t* x = px->x;
    const int8_t* w = px->w + oc;
    for (int32_t fy = taps_y; fy > 0; fy--) {
      const int8_t* xp = x;
      const int8_t* wp = w;
      for (int32_t t = taps_x; t > 0; t--) {
        const uint32_t xv = (uint32_t)((int32_t)*xp + offset);
        uint32_t ww = tvmd_cmsis_read_s8x4(wp), wv = __sxtb16(ww);
        a0 = __smlabb(xv, wv, a0);
        a2 = __smlabt(xv, wv, a2);
        wv = tvmd_cmsis_sxtb16_ror8(ww);
        a1 = __smlabb(xv, wv, a1);
        a3 = __smlabt(xv, wv, a3);
        ww = tvmd_cmsis_read_s8x4(wp + 4);
        wv = __sxtb16(ww);
        a4 = __smlabb(xv, wv, a4);
        a6 = __smlabt(xv, wv, a6);
        wv = tvmd_cmsis_sxtb16_ror8(ww);
        a5 = __smlabb(xv, wv, a5);
        a7 = __smlabt(xv, wv, a7);
        xp += x_tap;
        wp += w_tap;
      }
      x += x_row;
      w += w_row;
    }
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
    a[4] = a4;
    a[5] = a5;
    a[6] = a6;
    a[7] = a7;
    if (int8_range) {
      for (int32_t j = 0; j < 8; j++) {
        out[oc + j] = tvmd_cmsis_clamp_s8(tvmd_cmsis_out_value(a[j], bias, oc + j, multiplier[(oc + j) * qstep],
                                                               shift[(oc + j) * qstep], output_offset));
      }
      continue;
    }
    for (int32_t j = 0; j < 8; j++) {
      out[oc + j] = tvmd_cmsis_out_1(a[j], bias, oc + j, multiplier[(oc + j) * qstep], shift[(oc + j) * qstep],
                                     output_offset, act_min, act_max);
    }
  }
}
#endif

/* Output channels [oc, oc + 4) (the first n live) of one pixel; bcast: one
 * input channel for all.  Inlined with constant n and bcast where it can be. */
TVMD_CMSIS_INLINE void dw_block(const dw_ctx_t* c, const dw_window_t* w, int32_t oc, int32_t n, int8_t* out,
                                int bcast) {
  const int32_t offset = c->offset, out_ch = c->out_ch, in_ch = c->in_ch;
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
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
        /* One input channel (four channels of another take dw_sums4_dsp). */
        const uint32_t x02 = ((uint32_t)((int32_t)*x + offset) & 0xFFFFu) * 0x10001u, x13 = x02;
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
#if TVMD_CMSIS_MVE
  if (c.in_ch != 1) {
    depthwise_columns_mve(p, &c, io);
    return;
  }
#endif
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
#if TVMD_CMSIS_DSP && !TVMD_CMSIS_MVE
        if (out_ch >= (c.in_ch == 1 ? 8 : 4)) {
          dw_pixel_t px = {w.image, c.filter, out, w.fy1 - w.fy0, w.fx1 - w.fx0,
                           (size_t)c.dilation_w * (size_t)c.in_ch, (size_t)out_ch,
                           (size_t)c.dilation_h * (size_t)c.in_w * (size_t)c.in_ch,
                           (size_t)c.filter_w * (size_t)out_ch};
          /* Addresses formed only for a window with taps (an empty one reads nothing). */
          if (px.taps_y > 0 && px.taps_x > 0) {
            px.x = w.image + ((size_t)(w.iy0 + w.fy0 * c.dilation_h) * (size_t)c.in_w +
                              (size_t)(w.ix0 + w.fx0 * c.dilation_w)) * (size_t)c.in_ch;
            px.w = c.filter + (size_t)(w.fy0 * c.filter_w + w.fx0) * (size_t)out_ch;
          }
          if (c.in_ch == 1) {
            dw_pixel_one_dsp(&c, &px);
            oc0 = out_ch & ~7;
          } else {
            dw_pixel_dsp(&c, &px);
            oc0 = out_ch & ~3;
          }
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
