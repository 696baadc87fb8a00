/*
 * CONV_2D for the M-profile packing (-mcpu=cortex-m*): the operands as
 * CMSIS-NN's arm_convolve_s8 takes them.  The int8 OHWI filter is read in
 * place from the filter buffer (buffers[1]).  Each path blocks output pixels
 * by output channels so several sums share every load, and requantizes as
 * TFLM's reference ConvPerChannel does:
 *
 *  - Helium (MVE): four output pixels against four output channels at a
 *    time (one channel at a time for a group's last channels), sixteen int8
 *    products per VMLADAVA.  The pixels' receptive fields are
 *    int8 im2col rows (a tap outside the image holds the input zero point, so
 *    it adds nothing once the offset is applied); a pointwise convolution
 *    (1x1, stride 1, no padding, one group) reads the image itself.  The
 *    input offset enters as input_offset * sum(filter row), the sum taken by
 *    VADDVA in the same loop, as CMSIS-NN's arm_nn_mat_mult_nt_t_s8 does;
 *    each pixel's four channels are requantized as one vector (multipliers,
 *    shifts and bias loaded once per four channels) and stored in place; a
 *    lone channel's four pixels are requantized together and scattered.
 *  - DSP: two output pixels by two output channels; im2col columns of int16
 *    with the offset added (SXTAB16, four values at a time along a filter row
 *    inside the image), stored in the order SXTB16 unpacks a filter word in
 *    ([0, 2], [1, 3] per four taps), two products per SMLAD.
 *  - plain C: the same blocking with int16 columns in natural order.
 *
 * Scratch, every path: 2 * k * sizeof(int16_t) bytes (what
 * arm_convolve_s8_get_buffer_size asks): two int16 columns (DSP, plain C) or
 * four int8 rows (MVE).
 * Integer arithmetic only; the int32 sums cannot overflow (bounded at
 * prepare), so no path differs from another in a single bit.
 */
#include "mprofile.h"

size_t tvmd_cmsis_conv_m_s8_get_buffer_size(const tvmd_cmsis_conv_m_params_t* p) {
  return 2u * (size_t)p->k * sizeof(int16_t);
}

/* The input pixel of tap (fy, fx) of output pixel (oy, ox), NULL when it
 * lies outside the image (channel ch0 of the pixel otherwise). */
static inline const int8_t* tap(const tvmd_cmsis_conv_m_params_t* p, const int8_t* image, int32_t ch0, int32_t iy,
                                 int32_t ix) {
  if (iy < 0 || iy >= p->in_h || ix < 0 || ix >= p->in_w) return NULL;
  return image + ((size_t)iy * (size_t)p->in_w + (size_t)ix) * (size_t)p->in_ch + (size_t)ch0;
}

/* ------------------------------------------------------------------ MVE */
#if TVMD_CMSIS_MVE
/* Row (int8, length k) of output pixel px: the window, the input zero point
 * where a tap is outside the image.  The taps of a filter row inside the
 * image are one copy when they cover whole input pixels (undilated, one
 * group). */
/* Out of line: inlined, it costs the pointwise loop registers. */
__attribute__((noinline)) static void fill_row_s8(const tvmd_cmsis_conv_m_params_t* p, const int8_t* image,
                                                  int32_t ch0, int32_t px, int8_t* row) {
  const int zero_point = (int)(int8_t)(-p->q.input_offset);
  const int32_t fic = p->filter_in_ch, fw = p->filter_w, in_w = p->in_w;
  const int32_t oy = px / p->out_w, ox = px % p->out_w;
  const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
  /* Undilated over whole input pixels: a filter row's taps inside the image
   * are one copy, those outside (at the left and right edges) the zero point. */
  const int contiguous = p->dilation_w == 1 && fic == p->in_ch;
  const int32_t lo = ix0 < 0 ? (-ix0 < fw ? -ix0 : fw) : 0;
  const int32_t hi = in_w - ix0 < fw ? (in_w - ix0 > lo ? in_w - ix0 : lo) : fw;
  for (int32_t fy = 0; fy < p->filter_h; fy++) {
    const int32_t iy = iy0 + fy * p->dilation_h;
    int8_t* dst = row + (size_t)fy * (size_t)fw * (size_t)fic;
    if (iy < 0 || iy >= p->in_h) {
      memset(dst, zero_point, (size_t)fw * (size_t)fic);
    } else if (contiguous) {
      if (lo > 0) memset(dst, zero_point, (size_t)lo * (size_t)fic);
      if (hi > lo) {
        memcpy(dst + (size_t)lo * (size_t)fic, image + ((size_t)iy * (size_t)in_w + (size_t)(ix0 + lo)) * (size_t)fic,
               (size_t)(hi - lo) * (size_t)fic);
      }
      if (hi < fw) memset(dst + (size_t)hi * (size_t)fic, zero_point, (size_t)(fw - hi) * (size_t)fic);
    } else {
      for (int32_t fx = 0; fx < fw; fx++) {
        const int8_t* src = tap(p, image, ch0, iy, ix0 + fx * p->dilation_w);
        if (src == NULL) memset(dst + fx * fic, zero_point, (size_t)fic);
        else memcpy(dst + fx * fic, src, (size_t)fic);
      }
    }
  }
}

/* s[r * s_step] = row r . w (rows at stride k) and *wsum = sum(w), over k int8 values. */
static inline void dot_4x1_mve(const int8_t* r0, int32_t stride, const int8_t* w, int32_t k, int32_t* s,
                               int32_t s_step, int32_t* wsum) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, ws = 0;
  const int8_t *r1 = r0 + stride, *r2 = r1 + stride, *r3 = r2 + stride;
  for (int32_t j = k >> 4; j > 0; j--) {
    const int8x16_t wv = vldrbq_s8(w);
    ws = vaddvaq_s8(ws, wv);
    a0 = vmladavaq_s8(a0, vldrbq_s8(r0), wv);
    a1 = vmladavaq_s8(a1, vldrbq_s8(r1), wv);
    a2 = vmladavaq_s8(a2, vldrbq_s8(r2), wv);
    a3 = vmladavaq_s8(a3, vldrbq_s8(r3), wv);
    w += 16;
    r0 += 16;
    r1 += 16;
    r2 += 16;
    r3 += 16;
  }
  if (k & 15) {
    /* The tail: lanes past k load as zero and add nothing. */
    const mve_pred16_t t = vctp8q((uint32_t)(k & 15));
    const int8x16_t wv = vldrbq_z_s8(w, t);
    ws = vaddvaq_s8(ws, wv);
    a0 = vmladavaq_s8(a0, vldrbq_z_s8(r0, t), wv);
    a1 = vmladavaq_s8(a1, vldrbq_z_s8(r1, t), wv);
    a2 = vmladavaq_s8(a2, vldrbq_z_s8(r2, t), wv);
    a3 = vmladavaq_s8(a3, vldrbq_z_s8(r3, t), wv);
  }
  s[0] = a0;
  s[s_step] = a1;
  s[2 * s_step] = a2;
  s[3 * s_step] = a3;
  *wsum = ws;
}

static void conv_mve(const tvmd_cmsis_conv_m_params_t* p, const tvmd_cmsis_weighted_io_t* io) {
  int8_t* rows = (int8_t*)io->scratch;
  /* Read once: the int8 stores below could alias the params for the compiler. */
  const int32_t k = p->k, out_ch = p->out_ch, per_group = out_ch / p->groups, pixels = p->out_h * p->out_w;
  const int32_t input_offset = p->q.input_offset, per_channel = p->per_channel, groups = p->groups;
  const int32_t* multiplier = p->multiplier;
  const int8_t* shift = p->shift;
  const int32_t* bias = io->bias;
  const int8_t* filter = io->filter;
  const tvmd_cmsis_quant_t q = p->q;
  const int pointwise = p->filter_h == 1 && p->filter_w == 1 && p->stride_h == 1 && p->stride_w == 1 &&
                        p->pad_h == 0 && p->pad_w == 0 && groups == 1;
  const size_t in_image = (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
  const uint32x4_t scatter = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)out_ch);
  int32x4_t m = vdupq_n_s32(multiplier[0]), sh = vdupq_n_s32(shift[0]);
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t* image = io->input + (size_t)b * in_image;
    int8_t* out_image = io->output + (size_t)b * (size_t)pixels * (size_t)out_ch;
    for (int32_t g = 0; g < groups; g++) {
      const int32_t ch0 = g * p->filter_in_ch;
      for (int32_t px = 0; px < pixels; px += 4) {
        const int32_t n = pixels - px < 4 ? pixels - px : 4;
        /* A full block of a pointwise convolution reads the image; otherwise the
         * four rows are built in scratch, missing pixels of a last block
         * repeating the first (they are not stored). */
        const int8_t* r0 = rows;
        if (pointwise && n == 4) {
          r0 = image + (size_t)px * (size_t)k;
        } else {
          if (pointwise) memcpy(rows, image + (size_t)px * (size_t)k, (size_t)n * (size_t)k);
          else for (int32_t i = 0; i < n; i++) fill_row_s8(p, image, ch0, px + i, rows + (size_t)i * (size_t)k);
          for (int32_t i = n; i < 4; i++) memcpy(rows + (size_t)i * (size_t)k, rows, (size_t)k);
        }
        const mve_pred16_t store = vctp32q((uint32_t)n);
        int8_t* out = out_image + (size_t)px * (size_t)out_ch;
        int32_t oc = g * per_group;
        const int32_t end = (g + 1) * per_group;
        /* Four channels at a time: their sums for the four pixels as [pixel][channel], then each
         * pixel's four channels requantized as one vector and stored in place (no scatter). */
        for (; oc + 4 <= end; oc += 4) {
          int32_t t[16], ws[4];
          for (int32_t j = 0; j < 4; j++) dot_4x1_mve(r0, k, filter + (size_t)(oc + j) * (size_t)k, k, t + j, 4, ws + j);
          /* sum((x + offset) * w) = sum(x * w) + offset * sum(w): exact (bounded at prepare). */
          int32x4_t base = vmulq_n_s32(vldrwq_s32(ws), input_offset);
          if (bias != NULL) base = vaddq_s32(base, vldrwq_s32(bias + oc)); /* wraps, as the reference */
          const int32x4_t m4 = per_channel ? vldrwq_s32(multiplier + oc) : m;
          const int32x4_t sh4 = per_channel ? vldrbq_s32(shift + oc) : sh;
          for (int32_t i = 0; i < n; i++) {
            const int32x4_t acc = vaddq_s32(vldrwq_s32(t + 4 * i), base);
            vstrbq_s32(out + (size_t)i * (size_t)out_ch + oc,
                       tvmd_cmsis_clamp_mve(tvmd_cmsis_requantize_mve(acc, m4, sh4), &q));
          }
        }
        for (; oc < end; oc++) {
          int32_t s[4], wsum;
          dot_4x1_mve(r0, k, filter + (size_t)oc * (size_t)k, k, s, 1, &wsum);
          /* sum((x + offset) * w) = sum(x * w) + offset * sum(w): exact (bounded at prepare). */
          int32x4_t acc = vaddq_n_s32(vldrwq_s32(s), wsum * input_offset);
          if (bias != NULL) acc = vaddq_n_s32(acc, bias[oc]); /* wraps, as the reference */
          if (per_channel) {
            m = vdupq_n_s32(multiplier[oc]);
            sh = vdupq_n_s32(shift[oc]);
          }
          acc = tvmd_cmsis_clamp_mve(tvmd_cmsis_requantize_mve(acc, m, sh), &q);
          vstrbq_scatter_offset_p_s32(out + oc, scatter, acc, store);
        }
      }
    }
  }
}
#endif

/* ---------------------------------------------------- DSP and plain C */
#if !TVMD_CMSIS_MVE
#if TVMD_CMSIS_DSP
/* Where value j of a column goes: within each full group of four taps the
 * order SXTB16 unpacks a filter word in, [0, 2, 1, 3]; the tail (k % 4)
 * stays in order. */
#define TVMD_COL_POS(j, k4) ((j) < (k4) ? (((j) & ~3) | (((j) & 1) << 1) | (((j) >> 1) & 1)) : (j))
#else
#define TVMD_COL_POS(j, k4) (j)
#endif

/* n values of a column from src (NULL: taps outside the image, zero: the
 * reference skips them) at column index at, the input offset added. */
static inline void column_run(int16_t* col, int32_t at, const int8_t* src, int32_t n, int16_t offset, int32_t k4) {
  int32_t i = 0;
  (void)k4;
#if TVMD_CMSIS_DSP
  if (src != NULL && (at & 3) == 0) {
    /* Whole groups of four: SXTAB16 widens values 0 and 2, then 1 and 3, with
     * the offset, which is the order TVMD_COL_POS stores them in. */
    const uint32_t offsets = ((uint32_t)(uint16_t)offset) * 0x10001u;
    for (; i + 4 <= n && at + i + 4 <= k4; i += 4) {
      const uint32_t w = tvmd_cmsis_read_s8x4(src + i);
      const uint32_t x02 = __sxtab16(offsets, w), x13 = tvmd_cmsis_sxtab16_ror8(offsets, w);
      memcpy(col + at + i, &x02, sizeof x02);
      memcpy(col + at + i + 2, &x13, sizeof x13);
    }
  }
#endif
  for (; i < n; i++) {
    const int32_t j = at + i;
    col[TVMD_COL_POS(j, k4)] = src == NULL ? 0 : (int16_t)(src[i] + offset);
  }
}

/* Column (int16, length k): the window with the input offset added, zero
 * where a tap is outside (the reference skips those taps).  The taps of a
 * filter row inside the image, undilated, over whole input pixels, are one
 * run. */
static void fill_column(const tvmd_cmsis_conv_m_params_t* p, const int8_t* image, int32_t ch0, int32_t px,
                        int16_t* col) {
  const int16_t offset = (int16_t)p->q.input_offset;
  const int32_t k4 = p->k & ~3, fic = p->filter_in_ch, fw = p->filter_w;
  const int32_t oy = px / p->out_w, ox = px % p->out_w;
  const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
  /* Undilated over whole input pixels: a filter row's taps inside the image
   * are one run, those outside (at the left and right edges) zeros. */
  const int contiguous = p->dilation_w == 1 && fic == p->in_ch;
  const int32_t lo = ix0 < 0 ? (-ix0 < fw ? -ix0 : fw) : 0;
  const int32_t hi = p->in_w - ix0 < fw ? (p->in_w - ix0 > lo ? p->in_w - ix0 : lo) : fw;
  int32_t at = 0;
  for (int32_t fy = 0; fy < p->filter_h; fy++) {
    const int32_t iy = iy0 + fy * p->dilation_h;
    if (iy < 0 || iy >= p->in_h) {
      column_run(col, at, NULL, fw * fic, offset, k4);
      at += fw * fic;
      continue;
    }
    if (contiguous) {
      if (lo > 0) column_run(col, at, NULL, lo * fic, offset, k4);
      if (hi > lo) {
        column_run(col, at + lo * fic, image + ((size_t)iy * (size_t)p->in_w + (size_t)(ix0 + lo)) * (size_t)fic,
                   (hi - lo) * fic, offset, k4);
      }
      if (hi < fw) column_run(col, at + hi * fic, NULL, (fw - hi) * fic, offset, k4);
      at += fw * fic;
      continue;
    }
    for (int32_t fx = 0; fx < fw; fx++) {
      column_run(col, at, tap(p, image, ch0, iy, ix0 + fx * p->dilation_w), fic, offset, k4);
      at += fic;
    }
  }
}

/* s[2 * c + r] = column c . filter row r, for columns c0, c1 and rows w0, w1. */
TVMD_CMSIS_KEEP_ORDER static void dot_2x2(const int16_t* c0, const int16_t* c1, const int8_t* w0, const int8_t* w1, int32_t k,
                    int32_t s[4]) {
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
  int32_t i = 0;
#if TVMD_CMSIS_DSP
  /* Four taps: one filter row at a time, so few values are live at once. */
#define TVMD_DOT_2X2_STEP(at)                                                               \
  do {                                                                                      \
    const uint32_t x02 = tvmd_cmsis_read_s16x2(c0 + (at)), x13 = tvmd_cmsis_read_s16x2(c0 + (at) + 2); \
    const uint32_t y02 = tvmd_cmsis_read_s16x2(c1 + (at)), y13 = tvmd_cmsis_read_s16x2(c1 + (at) + 2); \
    uint32_t v = tvmd_cmsis_read_s8x4(w0 + (at)), u = __sxtb16(v);                          \
    s00 = __smlad(x02, u, s00);                                                             \
    s10 = __smlad(y02, u, s10);                                                             \
    u = tvmd_cmsis_sxtb16_ror8(v);                                                          \
    s00 = __smlad(x13, u, s00);                                                             \
    s10 = __smlad(y13, u, s10);                                                             \
    v = tvmd_cmsis_read_s8x4(w1 + (at));                                                    \
    u = __sxtb16(v);                                                                        \
    s01 = __smlad(x02, u, s01);                                                             \
    s11 = __smlad(y02, u, s11);                                                             \
    u = tvmd_cmsis_sxtb16_ror8(v);                                                          \
    s01 = __smlad(x13, u, s01);                                                             \
    s11 = __smlad(y13, u, s11);                                                             \
  } while (0)
  for (; i + 8 <= k; i += 8) {
    TVMD_DOT_2X2_STEP(i);
    TVMD_DOT_2X2_STEP(i + 4);
  }
  if (i + 4 <= k) {
    TVMD_DOT_2X2_STEP(i);
    i += 4;
  }
#undef TVMD_DOT_2X2_STEP
#endif
  for (; i < k; i++) {
    const int32_t a0 = c0[i], a1 = c1[i], b0 = w0[i], b1 = w1[i];
    s00 += a0 * b0;
    s01 += a0 * b1;
    s10 += a1 * b0;
    s11 += a1 * b1;
  }
  s[0] = s00;
  s[1] = s01;
  s[2] = s10;
  s[3] = s11;
}

static void conv_columns(const tvmd_cmsis_conv_m_params_t* p, const tvmd_cmsis_weighted_io_t* io) {
  int16_t* cols = (int16_t*)io->scratch;
  /* Read once: the int8 stores below could alias the params for the compiler. */
  const int32_t k = p->k, per_group = p->out_ch / p->groups, pixels = p->out_h * p->out_w;
  const int32_t qstep = p->per_channel ? 1 : 0;
  const int32_t* multiplier = p->multiplier;
  const int8_t* shift = p->shift;
  const int32_t* bias = io->bias;
  const tvmd_cmsis_quant_t q = p->q;
  const int int8_range = q.act_min == INT8_MIN && q.act_max == INT8_MAX;
  const size_t in_image = (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t* image = io->input + (size_t)b * in_image;
    int8_t* out_image = io->output + (size_t)b * (size_t)pixels * (size_t)p->out_ch;
    for (int32_t g = 0; g < p->groups; g++) {
      for (int32_t px = 0; px < pixels; px += 2) {
        const int32_t two = px + 1 < pixels;
        fill_column(p, image, g * p->filter_in_ch, px, cols);
        if (two) fill_column(p, image, g * p->filter_in_ch, px + 1, cols + k);
        /* A lone last pixel pairs with itself; its copy is not stored. */
        const int16_t* col1 = two ? cols + k : cols;
        int8_t* out0 = out_image + (size_t)px * (size_t)p->out_ch;
        int8_t* out1 = out0 + p->out_ch;
        const int32_t end = (g + 1) * per_group;
        for (int32_t oc = g * per_group; oc < end; oc += 2) {
          /* A lone last channel pairs with itself too. */
          const int32_t oc1 = oc + 1 < end ? oc + 1 : oc;
          int32_t sums[4];
          dot_2x2(cols, col1, io->filter + (size_t)oc * (size_t)k, io->filter + (size_t)oc1 * (size_t)k, k, sums);
          const int32_t m0 = multiplier[oc * qstep], s0 = shift[oc * qstep];
          const int32_t m1 = multiplier[oc1 * qstep], s1 = shift[oc1 * qstep];
          if (int8_range) {
            out0[oc] = tvmd_cmsis_clamp_s8(tvmd_cmsis_out_value(sums[0], bias, oc, m0, s0, q.output_offset));
            out0[oc1] = tvmd_cmsis_clamp_s8(tvmd_cmsis_out_value(sums[1], bias, oc1, m1, s1, q.output_offset));
            if (two) {
              out1[oc] = tvmd_cmsis_clamp_s8(tvmd_cmsis_out_value(sums[2], bias, oc, m0, s0, q.output_offset));
              out1[oc1] = tvmd_cmsis_clamp_s8(tvmd_cmsis_out_value(sums[3], bias, oc1, m1, s1, q.output_offset));
            }
            continue;
          }
          out0[oc] = tvmd_cmsis_out_1(sums[0], bias, oc, m0, s0, q.output_offset, q.act_min, q.act_max);
          out0[oc1] = tvmd_cmsis_out_1(sums[1], bias, oc1, m1, s1, q.output_offset, q.act_min, q.act_max);
          if (two) {
            out1[oc] = tvmd_cmsis_out_1(sums[2], bias, oc, m0, s0, q.output_offset, q.act_min, q.act_max);
            out1[oc1] = tvmd_cmsis_out_1(sums[3], bias, oc1, m1, s1, q.output_offset, q.act_min, q.act_max);
          }
        }
      }
    }
  }
}
#endif

int32_t tvmd_cmsis_conv_m_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_conv_m_params_t* p = (const tvmd_cmsis_conv_m_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_CONV_M) return TVMD_ERR_INVALID_ARGUMENT;
  tvmd_cmsis_weighted_io_t io;
  const int32_t status = tvmd_cmsis_weighted_enter(buffers, p->num_inputs, 1, resource_handle,
                                                   TVMD_CMSIS_KIND_CONV, p->macs, &io);
  if (status != TVMD_OK) return status;
  if (io.filter == NULL) return TVMD_ERR_INVALID_ARGUMENT;
#if TVMD_CMSIS_MVE
  conv_mve(p, &io);
#else
  conv_columns(p, &io);
#endif
  return TVMD_OK;
}
