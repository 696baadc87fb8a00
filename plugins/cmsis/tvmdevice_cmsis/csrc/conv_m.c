/*
 * CONV_2D for the M-profile packing (-mcpu=cortex-m*): the operands as
 * CMSIS-NN's arm_convolve_s8 takes them.  The int8 OHWI filter is read in
 * place from the filter buffer (buffers[1]).  Each path blocks output pixels
 * by output channels so several sums share every load, and requantizes as
 * TFLM's reference ConvPerChannel does:
 *
 *  - Helium (MVE): three output pixels against two output channels per pass
 *    (four channels between requantizations), sixteen int8 products per
 *    VMLADAVA, six sums in registers.  The pixels' receptive fields are int8
 *    rows (a tap outside the image holds the input zero point, so it adds
 *    nothing once the offset is applied) copied into the scratch interleaved
 *    by sixteen values, so one pointer with immediate offsets walks all
 *    three (a pointwise convolution's rows are vector copies of the image; a
 *    narrow first layer's filter rows one predicated store each); with GCC
 *    the loop over a filter row is assembly (VMLADAVA accumulates into even
 *    registers only).  The input offset and the bias enter once per channel
 *    and call as offset * sum(filter row) + bias, so the loop is a pure int8
 *    dot product (CMSIS-NN's kernel sums); each pixel's four channels are
 *    requantized as one vector (multipliers, shifts and those terms loaded
 *    once per four channels) and stored in place.
 *  - DSP: two output pixels by two output channels; im2col columns of int16
 *    with the offset added (SXTAB16, four values at a time along a filter row
 *    inside the image), stored in the order SXTB16 unpacks a filter word in
 *    ([0, 2], [1, 3] per four taps), two products per SMLAD.
 *  - plain C: the same blocking with int16 columns in natural order.
 *
 * Scratch, every path: 2 * k * sizeof(int16_t) bytes (what
 * arm_convolve_s8_get_buffer_size asks): two int16 columns (DSP, plain C) or
 * three interleaved int8 rows (MVE, 3k bytes).
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
/* The MVE path works on blocks of TVMD_CONV_PIXELS (three) output pixels'
 * rows (int8, k values each: the receptive field, a tap outside the image
 * holding the input zero point, so it adds nothing once the offset is
 * applied), interleaved so one pointer walks them all: for each full sixteen
 * values c < kf = k / 16, the pixels' values 16c..16c+15 side by side (pixel
 * i at 48c + 16i); then the t = k % 16 values left of each pixel one after
 * another (pixel i at 48kf + ti).  3k bytes of the scratch. */
#define TVMD_CONV_PIXELS 3
/* Output channels whose bias and offset terms (TVMD_CONV_CHANNELS int32 on
 * the stack) are taken once per call, before the pixels. */
#define TVMD_CONV_CHANNELS 64

/* Where value j of pixel i's row lies in a block. */
static inline int8_t* block_at(int8_t* blk, int32_t kf, int32_t t, int32_t i, int32_t j) {
  const int32_t full = kf << 4;
  if (j < full) return blk + (j >> 4) * (16 * TVMD_CONV_PIXELS) + (i << 4) + (j & 15);
  return blk + full * TVMD_CONV_PIXELS + i * t + (j - full);
}

/* n <= 16 values to dst: from src, or the zero point where src is NULL (one
 * predicated load and store). */
static inline void put_16(int8_t* dst, const int8_t* src, int32_t n, int8_t zero_point) {
  const mve_pred16_t p = vctp8q((uint32_t)n);
  vstrbq_p_s8(dst, src != NULL ? vldrbq_z_s8(src, p) : vdupq_n_s8(zero_point), p);
}

/* Values [at, at + n) of pixel i's row in a block: from src (NULL: the zero
 * point), split where the layout breaks them (every sixteen values). */
TVMD_CMSIS_INLINE void put_run(int8_t* blk, int32_t kf, int32_t t, int32_t i, int32_t at, const int8_t* src,
                               int32_t n, int8_t zero_point) {
  const int32_t full = kf << 4;
  while (n > 0) {
    int32_t m = at < full ? 16 - (at & 15) : 16; /* the tail (t < 16 values) is one run */
    if (m > n) m = n;
    put_16(block_at(blk, kf, t, i, at), src, m, zero_point);
    if (src != NULL) src += m;
    at += m;
    n -= m;
  }
}

/* Filter row fy of pixel i's row in a block (its input row iy, its window
 * starting at input column ix0): the values of the taps inside the image,
 * the input zero point for the others.  The taps inside cover whole input
 * pixels [lo, hi) of the window and are one run when `contiguous`. */
static void fill_filter_row(const tvmd_cmsis_conv_m_params_t* p, const int8_t* image, int32_t ch0, int8_t* blk,
                            int32_t i, int32_t fy, int32_t iy, int32_t ix0, int contiguous, int32_t lo, int32_t hi) {
  const int8_t zero_point = (int8_t)(-p->q.input_offset);
  const int32_t fic = p->filter_in_ch, fw = p->filter_w, kf = p->k >> 4, t = p->k & 15, at = fy * fw * fic;
  if (iy < 0 || iy >= p->in_h) {
    put_run(blk, kf, t, i, at, NULL, fw * fic, zero_point);
  } else if (contiguous) {
    if (lo > 0) put_run(blk, kf, t, i, at, NULL, lo * fic, zero_point);
    if (hi > lo) {
      put_run(blk, kf, t, i, at + lo * fic, image + ((size_t)iy * (size_t)p->in_w + (size_t)(ix0 + lo)) * (size_t)fic,
              (hi - lo) * fic, zero_point);
    }
    if (hi < fw) put_run(blk, kf, t, i, at + hi * fic, NULL, (fw - hi) * fic, zero_point);
  } else {
    for (int32_t fx = 0; fx < fw; fx++) {
      put_run(blk, kf, t, i, at + fx * fic, tap(p, image, ch0, iy, ix0 + fx * p->dilation_w), fic, zero_point);
    }
  }
}

/* Pixel i's row of a block for output pixel px: the window, the input zero
 * point where a tap is outside the image.  The taps of a filter row inside
 * the image are one run when they cover whole input pixels (undilated, one
 * group); when a filter row spans at most sixteen values that lie together
 * in the block (every row of a narrow first layer), it is one predicated
 * store of the zero point (at the image's edges) and one of the run.  Out of
 * line: inlined, it costs the dot products registers. */
__attribute__((noinline)) static void fill_block_row(const tvmd_cmsis_conv_m_params_t* p, const int8_t* image,
                                                     int32_t ch0, int32_t px, int8_t* blk, int32_t i) {
  const int32_t fic = p->filter_in_ch, fw = p->filter_w, fh = p->filter_h, in_w = p->in_w, in_h = p->in_h;
  const int32_t kf = p->k >> 4, t = p->k & 15, full = kf << 4, span = fw * fic, dh = p->dilation_h;
  const int32_t oy = px / p->out_w, ox = px % p->out_w;
  const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
  const int contiguous = p->dilation_w == 1 && fic == p->in_ch;
  const int32_t lo = ix0 < 0 ? (-ix0 < fw ? -ix0 : fw) : 0;
  const int32_t hi = in_w - ix0 < fw ? (in_w - ix0 > lo ? in_w - ix0 : lo) : fw;
  if (!contiguous || span > 16) {
    for (int32_t fy = 0; fy < fh; fy++) fill_filter_row(p, image, ch0, blk, i, fy, iy0 + fy * dh, ix0, contiguous, lo, hi);
    return;
  }
  const int8x16_t zero_point = vdupq_n_s8((int8_t)(-p->q.input_offset));
  const mve_pred16_t whole = vctp8q((uint32_t)span), run = vctp8q((uint32_t)((hi - lo) * fic));
  const int edge = lo > 0 || hi < fw;
  /* Input offsets (bytes) of the run's first value on each input row. */
  const ptrdiff_t step = (ptrdiff_t)dh * in_w * fic;
  ptrdiff_t from = ((ptrdiff_t)iy0 * in_w + ix0 + lo) * fic;
  int32_t iy = iy0, at = 0;
  for (int32_t fy = 0; fy < fh; fy++, iy += dh, at += span, from += step) {
    if (at < full && (at & 15) + span > 16) {
      /* Split by the layout: the general way. */
      fill_filter_row(p, image, ch0, blk, i, fy, iy, ix0, contiguous, lo, hi);
      continue;
    }
    int8_t* dst = block_at(blk, kf, t, i, at);
    const int inside = iy >= 0 && iy < in_h;
    if (!inside || edge) vstrbq_p_s8(dst, zero_point, whole);
    if (inside) vstrbq_p_s8(dst + lo * fic, vldrbq_z_s8(image + from, run), run);
  }
}

/* A block from rows of k values in memory (r[i]): a pointwise
 * convolution's pixels, read from the image. */
static void block_from_rows(int8_t* blk, const int8_t* const r[TVMD_CONV_PIXELS], int32_t kf, int32_t t) {
  for (int32_t c = 0; c < kf; c++) {
    for (int32_t i = 0; i < TVMD_CONV_PIXELS; i++) {
      vstrbq_s8(blk + c * (16 * TVMD_CONV_PIXELS) + (i << 4), vldrbq_s8(r[i] + (c << 4)));
    }
  }
  if (t > 0) {
    for (int32_t i = 0; i < TVMD_CONV_PIXELS; i++) {
      put_16(blk + kf * (16 * TVMD_CONV_PIXELS) + i * t, r[i] + (kf << 4), t, 0);
    }
  }
}

/* s[4i], s[4i + 1] = pixel i's row . w0 and . w1 (filter rows of k = 16kf +
 * t values), for the block's three pixels: per sixteen values two weights
 * loads and, per pixel, a load and two VMLADAVA (12 instructions for 96
 * products).  VMLADAVA accumulates into even registers only, and six sums
 * take six of the seven; with GCC the loop is assembly, so no sum leaves its
 * register.  The tail is predicated (weight lanes past t load as zero, and
 * the rows' loads stop at the block's end). */
TVMD_CMSIS_INLINE void dot_3x2(const int8_t* x, const int8_t* w0, const int8_t* w1, int32_t kf, int32_t t,
                               int32_t* s) {
  int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0, a20 = 0, a21 = 0;
#if defined(__GNUC__) && !defined(__clang__)
  if (kf > 0) {
    /* The first step sets the sums (VMLADAV), the loop adds the others. */
    __asm__ volatile(
        "   vldrb.8 q0, [%[w0]], #16\n"
        "   vldrb.8 q1, [%[w1]], #16\n"
        "   vldrb.8 q2, [%[x]], #48\n"
        "   vmladav.s8 %[a00], q2, q0\n"
        "   vmladav.s8 %[a01], q2, q1\n"
        "   vldrb.8 q2, [%[x], #-32]\n"
        "   vmladav.s8 %[a10], q2, q0\n"
        "   vmladav.s8 %[a11], q2, q1\n"
        "   vldrb.8 q2, [%[x], #-16]\n"
        "   vmladav.s8 %[a20], q2, q0\n"
        "   vmladav.s8 %[a21], q2, q1\n"
        "   wls     lr, %[n], 2f\n"
        "1: vldrb.8 q0, [%[w0]], #16\n"
        "   vldrb.8 q1, [%[w1]], #16\n"
        "   vldrb.8 q2, [%[x]], #48\n"
        "   vmladava.s8 %[a00], q2, q0\n"
        "   vmladava.s8 %[a01], q2, q1\n"
        "   vldrb.8 q2, [%[x], #-32]\n"
        "   vmladava.s8 %[a10], q2, q0\n"
        "   vmladava.s8 %[a11], q2, q1\n"
        "   vldrb.8 q2, [%[x], #-16]\n"
        "   vmladava.s8 %[a20], q2, q0\n"
        "   vmladava.s8 %[a21], q2, q1\n"
        "   le      lr, 1b\n"
        "2:\n"
        : [a00] "=&Te"(a00), [a01] "=&Te"(a01), [a10] "=&Te"(a10), [a11] "=&Te"(a11), [a20] "=&Te"(a20),
          [a21] "=&Te"(a21), [w0] "+r"(w0), [w1] "+r"(w1), [x] "+r"(x)
        : [n] "r"(kf - 1)
        : "q0", "q1", "q2", "lr", "memory");
  }
#else
  for (int32_t c = kf; c > 0; c--) {
    const int8x16_t u = vldrbq_s8(w0), v = vldrbq_s8(w1);
    int8x16_t xv = vldrbq_s8(x);
    a00 = vmladavaq_s8(a00, xv, u);
    a01 = vmladavaq_s8(a01, xv, v);
    xv = vldrbq_s8(x + 16);
    a10 = vmladavaq_s8(a10, xv, u);
    a11 = vmladavaq_s8(a11, xv, v);
    xv = vldrbq_s8(x + 32);
    a20 = vmladavaq_s8(a20, xv, u);
    a21 = vmladavaq_s8(a21, xv, v);
    w0 += 16;
    w1 += 16;
    x += 48;
  }
#endif
  if (t > 0) {
    const mve_pred16_t p = vctp8q((uint32_t)t);
    const int8x16_t u = vldrbq_z_s8(w0, p), v = vldrbq_z_s8(w1, p);
    int8x16_t xv = vldrbq_z_s8(x, p);
    a00 = vmladavaq_s8(a00, xv, u);
    a01 = vmladavaq_s8(a01, xv, v);
    xv = vldrbq_z_s8(x + t, p);
    a10 = vmladavaq_s8(a10, xv, u);
    a11 = vmladavaq_s8(a11, xv, v);
    xv = vldrbq_z_s8(x + 2 * t, p);
    a20 = vmladavaq_s8(a20, xv, u);
    a21 = vmladavaq_s8(a21, xv, v);
  }
  s[0] = a00;
  s[1] = a01;
  s[4] = a10;
  s[5] = a11;
  s[8] = a20;
  s[9] = a21;
}

/* sum(w) over a filter row of k = 16kf + t values. */
static inline int32_t row_sum(const int8_t* w, int32_t kf, int32_t t) {
  int32_t sum = 0;
  for (int32_t c = kf; c > 0; c--, w += 16) sum = vaddvaq_s8(sum, vldrbq_s8(w));
  if (t > 0) sum = vaddvaq_s8(sum, vldrbq_z_s8(w, vctp8q((uint32_t)t)));
  return sum;
}

static void conv_mve(const tvmd_cmsis_conv_m_params_t* p, const tvmd_cmsis_weighted_io_t* io) {
  int8_t* blk = (int8_t*)io->scratch;
  /* Read once: the int8 stores below could alias the params for the compiler. */
  const int32_t k = p->k, kf = k >> 4, t = k & 15, out_ch = p->out_ch, per_group = out_ch / p->groups;
  const int32_t pixels = p->out_h * p->out_w, input_offset = p->q.input_offset, per_channel = p->per_channel;
  const int32_t groups = p->groups;
  const int32_t* multiplier = p->multiplier;
  const int8_t* shift = p->shift;
  const int32_t* bias = io->bias;
  const int8_t* filter = io->filter;
  const tvmd_cmsis_quant_t q = p->q;
  const int pointwise = p->filter_h == 1 && p->filter_w == 1 && p->stride_h == 1 && p->stride_w == 1 &&
                        p->pad_h == 0 && p->pad_w == 0 && groups == 1;
  const size_t in_image = (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
  /* bias + input_offset * sum(filter row) per channel of a run of channels:
   * sum((x + offset) * w) + bias = sum(x * w) + (offset * sum(w) + bias),
   * wrapping as the reference's int32 addition (the sums are bounded at
   * prepare), so the dot products are pure int8 ones. */
  int32_t base[TVMD_CONV_CHANNELS];
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t* image = io->input + (size_t)b * in_image;
    int8_t* out_image = io->output + (size_t)b * (size_t)pixels * (size_t)out_ch;
    for (int32_t g = 0; g < groups; g++) {
      const int32_t ch0 = g * p->filter_in_ch, end = (g + 1) * per_group;
      for (int32_t oc0 = g * per_group; oc0 < end; oc0 += TVMD_CONV_CHANNELS) {
        const int32_t oc1 = end - oc0 < TVMD_CONV_CHANNELS ? end : oc0 + TVMD_CONV_CHANNELS;
        for (int32_t oc = oc0; oc < oc1; oc++) {
          const uint32_t term = (uint32_t)input_offset * (uint32_t)row_sum(filter + (size_t)oc * (size_t)k, kf, t);
          base[oc - oc0] = (int32_t)(term + (bias != NULL ? (uint32_t)bias[oc] : 0u));
        }
        for (int32_t px = 0; px < pixels; px += TVMD_CONV_PIXELS) {
          const int32_t n = pixels - px < TVMD_CONV_PIXELS ? pixels - px : TVMD_CONV_PIXELS;
          /* The missing pixels of a last block repeat the first (they are not stored). */
          if (pointwise) {
            const int8_t* r[TVMD_CONV_PIXELS];
            for (int32_t i = 0; i < TVMD_CONV_PIXELS; i++) r[i] = image + (size_t)(px + (i < n ? i : 0)) * (size_t)k;
            block_from_rows(blk, r, kf, t);
          } else {
            for (int32_t i = 0; i < TVMD_CONV_PIXELS; i++) fill_block_row(p, image, ch0, px + (i < n ? i : 0), blk, i);
          }
          int8_t* out = out_image + (size_t)px * (size_t)out_ch;
          int32_t oc = oc0;
          /* Four channels at a time, two per pass over the block: the sums as
           * [pixel][channel], each pixel's four channels requantized as one
           * vector and stored in place. */
          for (; oc + 4 <= oc1; oc += 4) {
            int32_t s[4 * TVMD_CONV_PIXELS];
            const int8_t* w = filter + (size_t)oc * (size_t)k;
            dot_3x2(blk, w, w + k, kf, t, s);
            dot_3x2(blk, w + 2 * k, w + 3 * k, kf, t, s + 2);
            const int32x4_t base4 = vldrwq_s32(base + (oc - oc0));
            const int32x4_t m4 = per_channel ? vldrwq_s32(multiplier + oc) : vdupq_n_s32(multiplier[0]);
            const int32x4_t sh4 = per_channel ? vldrbq_s32(shift + oc) : vdupq_n_s32(shift[0]);
#define TVMD_CONV_STORE(i) \
  vstrbq_s32(out + (size_t)(i) * (size_t)out_ch + oc, \
             tvmd_cmsis_clamp_mve(tvmd_cmsis_requantize_mve(vaddq_s32(vldrwq_s32(s + 4 * (i)), base4), m4, sh4), &q))
            TVMD_CONV_STORE(0);
            if (n > 1) TVMD_CONV_STORE(1);
            if (n > 2) TVMD_CONV_STORE(2);
#undef TVMD_CONV_STORE
          }
          /* The run's last channels (fewer than four), two at a time, a lone
           * one paired with itself (its copy not stored). */
          for (; oc < oc1; oc += 2) {
            int32_t s[4 * TVMD_CONV_PIXELS];
            const int32_t two = oc + 1 < oc1;
            const int8_t* w = filter + (size_t)oc * (size_t)k;
            dot_3x2(blk, w, two ? w + k : w, kf, t, s);
            for (int32_t i = 0; i < n; i++) {
              for (int32_t j = 0; j <= two; j++) {
                const int32_t c = oc + j, e = per_channel ? c : 0;
                out[(size_t)i * (size_t)out_ch + c] = tvmd_cmsis_out_1(s[4 * i + j], base, c - oc0, multiplier[e],
                                                                        shift[e], q.output_offset, q.act_min,
                                                                        q.act_max);
              }
            }
          }
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
