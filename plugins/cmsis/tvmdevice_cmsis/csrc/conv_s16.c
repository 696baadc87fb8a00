/*
 * CONV_2D and DEPTHWISE_CONV_2D on int16 activations with int8 filters
 * (CMSIS-NN's arm_convolve_s16 / arm_depthwise_conv_s16; TFLM's
 * reference_integer_ops ConvPerChannel / DepthwiseConvPerChannel for int16,
 * whose values the tests check).  Zero points are 0: each output is
 * sum(input * filter) + bias, accumulated at the bias's width (s16.h), the
 * taps outside the image adding nothing, the filter and input read in place.
 *
 * CONV_2D builds one output pixel's receptive field of a group as an int16
 * column in scratch (k = filter_h * filter_w * filter_in_ch values, zero
 * where a tap is outside the image: planned by the size query, as
 * arm_convolve_s16's im2col buffer) and takes its dot product with two
 * OHWI filter rows at a time: mprofile.h's int16 x int8 products (VMLALDAVA
 * on Helium, plain C elsewhere) or, on the DSP extension, SMLALD against a
 * column reordered once for SXTB16 (pair_column); exact in int64.
 *
 * DEPTHWISE_CONV_2D with depth multiplier 1 walks four channels at a time,
 * each tap's four inputs and four filter values contiguous: four int32 lanes
 * of VMUL + VADD on Helium, SMLABB/SMLATB/SMLABT/SMLATT on the DSP extension
 * (both over the window clipped to the image once, walked by pointers).  A
 * product is at most 2^22 in magnitude, so an int32 sum over at most 511 taps
 * is exact (CMSIS-NN's arm_depthwise_conv_s16 also sums the taps in int32);
 * larger windows and other depth multipliers take the int64 loop.
 */
#include "mprofile.h"
#include "s16.h"

static inline size_t at(int32_t b, int32_t y, int32_t x, int32_t h, int32_t w, int32_t ch) {
  return (((size_t)b * (size_t)h + (size_t)y) * (size_t)w + (size_t)x) * (size_t)ch;
}

size_t tvmd_cmsis_conv_s16_get_buffer_size(const tvmd_cmsis_conv_s16_params_t* p) {
  return (size_t)p->filter_h * (size_t)p->filter_w * (size_t)p->filter_in_ch * sizeof(int16_t);
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

/* The int16 column of output pixel (oy, ox) for the group whose input
 * channels start at ch0: the window, zero where a tap is outside the image.
 * A filter row inside the image over whole undilated pixels is one copy. */
static void fill_column(const tvmd_cmsis_conv_s16_params_t* p, const int16_t* image, int32_t ch0, int32_t oy,
                        int32_t ox, int16_t* col) {
  const int32_t fic = p->filter_in_ch, fw = p->filter_w;
  const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
  const int whole = p->dilation_w == 1 && fic == p->in_ch && ix0 >= 0 && ix0 + fw <= p->in_w;
  const size_t tap_bytes = (size_t)fic * sizeof(int16_t);
  for (int32_t ky = 0; ky < p->filter_h; ++ky) {
    const int32_t iy = iy0 + ky * p->dilation_h;
    int16_t* dst = col + (size_t)ky * (size_t)fw * (size_t)fic;
    if (iy < 0 || iy >= p->in_h) {
      memset(dst, 0, (size_t)fw * tap_bytes);
    } else if (whole) {
      memcpy(dst, image + at(0, iy, ix0, p->in_h, p->in_w, p->in_ch), (size_t)fw * tap_bytes);
    } else {
      for (int32_t kx = 0; kx < fw; ++kx) {
        const int32_t ix = ix0 + kx * p->dilation_w;
        if (ix < 0 || ix >= p->in_w) memset(dst + (size_t)kx * (size_t)fic, 0, tap_bytes);
        else memcpy(dst + (size_t)kx * (size_t)fic, image + at(0, iy, ix, p->in_h, p->in_w, p->in_ch) + (size_t)ch0,
                    tap_bytes);
      }
    }
  }
}

#if TVMD_CMSIS_DSP && !TVMD_CMSIS_MVE
/* DSP: each full group of four column values reordered to [x0, x2, x1, x3],
 * the order SXTB16 unpacks a filter word in, once per column rather than once
 * per pair of filter rows (mprofile.h's tvmd_cmsis_dot_s16_1x2 repacks its
 * input at every call); the tail (k % 4) stays in order. */
static void pair_column(int16_t* col, int32_t k) {
  for (int32_t i = 0; i + 4 <= k; i += 4) {
    const uint32_t xa = tvmd_cmsis_read_s16x2(col + i), xb = tvmd_cmsis_read_s16x2(col + i + 2);
    const uint32_t x02 = (xa & 0xFFFFu) | (xb << 16), x13 = (xa >> 16) | (xb & 0xFFFF0000u);
    memcpy(col + i, &x02, sizeof x02);
    memcpy(col + i + 2, &x13, sizeof x13);
  }
}

/* s[r] = column . filter row r for a paired column (pair_column), in int64. */
TVMD_CMSIS_KEEP_ORDER static void dot_paired_1x2(const int16_t* col, const int8_t* w0, const int8_t* w1, int32_t k,
                                                 int64_t s[2]) {
  int64_t s0 = 0, s1 = 0;
  int32_t i = 0;
  for (; i + 4 <= k; i += 4) {
    const uint32_t x02 = tvmd_cmsis_read_s16x2(col + i), x13 = tvmd_cmsis_read_s16x2(col + i + 2);
    uint32_t v = tvmd_cmsis_read_s8x4(w0 + i);
    s0 = __smlald(x02, __sxtb16(v), s0);
    s0 = __smlald(x13, __sxtb16(v >> 8), s0);
    v = tvmd_cmsis_read_s8x4(w1 + i);
    s1 = __smlald(x02, __sxtb16(v), s1);
    s1 = __smlald(x13, __sxtb16(v >> 8), s1);
  }
  for (; i < k; i++) {
    s0 += (int32_t)col[i] * (int32_t)w0[i];
    s1 += (int32_t)col[i] * (int32_t)w1[i];
  }
  s[0] = s0;
  s[1] = s1;
}
#define TVMD_CONV_S16_PREPARE(col, k) pair_column(col, k)
#define TVMD_CONV_S16_DOT dot_paired_1x2
#else
#define TVMD_CONV_S16_PREPARE(col, k) ((void)0)
#define TVMD_CONV_S16_DOT tvmd_cmsis_dot_s16_1x2
#endif

int32_t tvmd_cmsis_conv_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_conv_s16_params_t* p = (const tvmd_cmsis_conv_s16_params_t*)params;
  const int32_t status = start(p, TVMD_CMSIS_KIND_CONV_S16, buffers, 1, resource_handle);
  if (status != TVMD_OK) return status;
  const int16_t* input = (const int16_t*)buffers[0];
  const int8_t* filter = (const int8_t*)buffers[1];
  const void* bias = p->num_inputs == 3 ? buffers[2] : NULL;
  int16_t* output = (int16_t*)buffers[p->num_inputs];
  int16_t* col = (int16_t*)buffers[p->num_inputs + 1];
  const int32_t per_group = p->out_ch / p->groups;
  const int32_t k = p->filter_h * p->filter_w * p->filter_in_ch;
  for (int32_t b = 0; b < p->batches; ++b) {
    const int16_t* image = input + at(b, 0, 0, p->in_h, p->in_w, p->in_ch);
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        int16_t* out = output + at(b, oy, ox, p->out_h, p->out_w, p->out_ch);
        for (int32_t g = 0; g < p->groups; ++g) {
          fill_column(p, image, g * p->filter_in_ch, oy, ox, col);
          TVMD_CONV_S16_PREPARE(col, k);
          const int32_t end = (g + 1) * per_group;
          for (int32_t oc = g * per_group; oc < end; oc += 2) {
            /* A lone last channel pairs with itself; its copy is not stored. */
            const int32_t oc1 = oc + 1 < end ? oc + 1 : oc;
            int64_t dot[2];
            TVMD_CONV_S16_DOT(col, filter + (size_t)oc * (size_t)k, filter + (size_t)oc1 * (size_t)k, k, dot);
            out[oc] = tvmd_cmsis_output_s16((uint64_t)dot[0], p->bias_bits, bias, oc, p->multiplier[oc],
                                            p->shift[oc], p->act_min, p->act_max);
            out[oc1] = tvmd_cmsis_output_s16((uint64_t)dot[1], p->bias_bits, bias, oc1, p->multiplier[oc1],
                                             p->shift[oc1], p->act_min, p->act_max);
          }
        }
      }
    }
  }
  return TVMD_OK;
}

/* acc[j] = sum over the window's taps inside the image of x[c + j] * w[c + j]
 * for the n <= 4 channels from c (depth multiplier 1, at most 511 taps: exact
 * in int32). */
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
/* The taps [*k0, *k1) of one filter axis whose input coordinate origin + k *
 * dilation lies in [0, size): the window clipped once, not tap by tap. */
static inline void taps_inside(int32_t origin, int32_t dilation, int32_t filter, int32_t size, int32_t* k0,
                               int32_t* k1) {
  *k0 = origin < 0 ? (-origin + dilation - 1) / dilation : 0;
  const int32_t end = size - origin > 0 ? (size - origin + dilation - 1) / dilation : 0;
  *k1 = end < filter ? end : filter;
}

/* The same sums on Helium (four int32 lanes, VMUL + VADD) or the DSP
 * extension (SMLABB/SMLATB/SMLABT/SMLATT; fewer than four channels one by
 * one), the inputs and filter walked by pointers over the clipped window. */
static void depthwise_sum_4(const tvmd_cmsis_conv_s16_params_t* p, const int16_t* image, const int8_t* filter,
                            int32_t oy, int32_t ox, int32_t c, int32_t n, int32_t acc[4]) {
  const int32_t ch = p->out_ch;
  const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
  int32_t ky0, ky1, kx0, kx1;
  taps_inside(iy0, p->dilation_h, p->filter_h, p->in_h, &ky0, &ky1);
  taps_inside(ix0, p->dilation_w, p->filter_w, p->in_w, &kx0, &kx1);
  const size_t x_step = (size_t)p->dilation_w * (size_t)ch;
#if TVMD_CMSIS_MVE
  const mve_pred16_t live = vctp32q((uint32_t)n);
  int32x4_t sum = vdupq_n_s32(0);
#else
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
#endif
  for (int32_t ky = ky0; ky < ky1; ++ky) {
    const int16_t* x = image + at(0, iy0 + ky * p->dilation_h, ix0 + kx0 * p->dilation_w, p->in_h, p->in_w, ch) +
                       (size_t)c;
    const int8_t* w = filter + ((size_t)ky * (size_t)p->filter_w + (size_t)kx0) * (size_t)ch + (size_t)c;
    for (int32_t kx = kx0; kx < kx1; ++kx, x += x_step, w += ch) {
#if TVMD_CMSIS_MVE
      sum = vaddq_s32(sum, vmulq_s32(vldrhq_z_s32(x, live), vldrbq_z_s32(w, live)));
#else
      if (n == 4) {
        /* x as [x0, x1] and [x2, x3]; w unpacked by SXTB16 as [w0, w2] and [w1, w3]. */
        const int32_t xa = (int32_t)tvmd_cmsis_read_s16x2(x), xb = (int32_t)tvmd_cmsis_read_s16x2(x + 2);
        const uint32_t v = tvmd_cmsis_read_s8x4(w);
        const int32_t w02 = (int32_t)__sxtb16(v), w13 = (int32_t)__sxtb16(v >> 8);
        a0 = __smlabb(xa, w02, a0);
        a1 = __smlatb(xa, w13, a1);
        a2 = __smlabt(xb, w02, a2);
        a3 = __smlatt(xb, w13, a3);
        continue;
      }
      a0 += (int32_t)x[0] * (int32_t)w[0];
      if (n > 1) a1 += (int32_t)x[1] * (int32_t)w[1];
      if (n > 2) a2 += (int32_t)x[2] * (int32_t)w[2];
#endif
    }
  }
#if TVMD_CMSIS_MVE
  vstrwq_s32(acc, sum);
#else
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
#endif
}
#else
static void depthwise_sum_4(const tvmd_cmsis_conv_s16_params_t* p, const int16_t* image, const int8_t* filter,
                            int32_t oy, int32_t ox, int32_t c, int32_t n, int32_t acc[4]) {
  const int32_t ch = p->out_ch;
  const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (int32_t ky = 0; ky < p->filter_h; ++ky) {
    const int32_t iy = iy0 + ky * p->dilation_h;
    if (iy < 0 || iy >= p->in_h) continue;
    for (int32_t kx = 0; kx < p->filter_w; ++kx) {
      const int32_t ix = ix0 + kx * p->dilation_w;
      if (ix < 0 || ix >= p->in_w) continue;
      const int16_t* x = image + at(0, iy, ix, p->in_h, p->in_w, ch) + (size_t)c;
      const int8_t* w = filter + ((size_t)ky * (size_t)p->filter_w + (size_t)kx) * (size_t)ch + (size_t)c;
      a0 += (int32_t)x[0] * (int32_t)w[0];
      if (n > 1) a1 += (int32_t)x[1] * (int32_t)w[1];
      if (n > 2) a2 += (int32_t)x[2] * (int32_t)w[2];
      if (n > 3) a3 += (int32_t)x[3] * (int32_t)w[3];
    }
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}
#endif

int32_t tvmd_cmsis_depthwise_conv_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_conv_s16_params_t* p = (const tvmd_cmsis_conv_s16_params_t*)params;
  const int32_t status = start(p, TVMD_CMSIS_KIND_DEPTHWISE_CONV_S16, buffers, 0, resource_handle);
  if (status != TVMD_OK) return status;
  const int16_t* input = (const int16_t*)buffers[0];
  const int8_t* filter = (const int8_t*)buffers[1];
  const void* bias = p->num_inputs == 3 ? buffers[2] : NULL;
  int16_t* output = (int16_t*)buffers[p->num_inputs];
  const int32_t dm = p->depth_multiplier;
  if (dm == 1 && p->filter_h * p->filter_w <= 511) {
    for (int32_t b = 0; b < p->batches; ++b) {
      const int16_t* image = input + at(b, 0, 0, p->in_h, p->in_w, p->in_ch);
      for (int32_t oy = 0; oy < p->out_h; ++oy) {
        for (int32_t ox = 0; ox < p->out_w; ++ox) {
          int16_t* out = output + at(b, oy, ox, p->out_h, p->out_w, p->out_ch);
          for (int32_t c = 0; c < p->out_ch; c += 4) {
            const int32_t n = p->out_ch - c < 4 ? p->out_ch - c : 4;
            int32_t acc[4];
            depthwise_sum_4(p, image, filter, oy, ox, c, n, acc);
            for (int32_t j = 0; j < n; ++j) {
              out[c + j] = tvmd_cmsis_output_s16((uint64_t)(int64_t)acc[j], p->bias_bits, bias, c + j,
                                                 p->multiplier[c + j], p->shift[c + j], p->act_min, p->act_max);
            }
          }
        }
      }
    }
    return TVMD_OK;
  }
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
