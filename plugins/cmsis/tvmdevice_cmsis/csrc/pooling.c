/*
 * AVERAGE_POOL_2D and MAX_POOL_2D, int8: TFLM's reference_integer_ops
 * AveragePool / MaxPool (CMSIS-NN's arm_avgpool_s8 / arm_max_pool_s8 match).
 *
 * Windows are clipped to the image.  The average divides by the number of
 * taps inside the image, rounding half away from zero with C's truncating
 * division; the maximum starts from -128.  Input and output share their
 * quantization (checked at prepare time), so only the activation clamp is
 * applied.  Both vectorize across the contiguous channels of a pixel.
 *
 * On a Cortex-M (mprofile.h) each output pixel goes a group of channels at a
 * time through its whole window, the group's running values in registers
 * (the walk in pooling_m.h, shared with the int16 kernels):
 *  - Helium (MVE): MAX sixteen int8 lanes (VMAX), AVERAGE sixteen channels
 *    as four int32 vectors of sums; the last group tail-predicated;
 *  - DSP: MAX four channels per word (SSUB8 sets a flag per byte, SEL picks
 *    the larger), AVERAGE four channels per word as two pairs of int16 sums
 *    (SXTAB16), exact while the window has at most 256 taps (|sum| <= 128 *
 *    256 fits in int16; larger windows take the plain loop);
 *  - plain C (Cortex-M0/M3, the host): the loops below.
 * The average's rounding division stays scalar (SDIV) on every M-profile
 * path.  On x86-64 the AVX2 kernels of simd_x86_pooling.c do the same walk
 * (MAX 32 channels a block; AVERAGE 16 as int16 sums for windows of at most
 * 256 taps, divided exactly in float32).
 */
#include "internal.h"
#include "pooling_m.h"

size_t tvmd_cmsis_avg_pool_s8_get_buffer_size(const tvmd_cmsis_pool_params_t* p) {
  return (size_t)p->channels * sizeof(int32_t); /* as arm_avgpool_s8_get_buffer_size */
}

size_t tvmd_cmsis_max_pool_s8_get_buffer_size(const tvmd_cmsis_pool_params_t* p) {
  (void)p;
  return 0;
}

/* The clipped window [start, end) of filter taps along one axis. */
static void clip(int32_t origin, int32_t filter, int32_t size, int32_t* start, int32_t* end) {
  *start = tvmd_cmsis_max(0, -origin);
  *end = tvmd_cmsis_min(filter, size - origin);
}

static int32_t check(const tvmd_cmsis_pool_params_t* p, uint32_t kind, void* const* buffers) {
  if (p == NULL || p->kind != kind || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (buffers[0] == NULL || buffers[1] == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  return TVMD_OK;
}

TVMD_CMSIS_SIMD
static void sum_pixel(int32_t* restrict acc, const int8_t* restrict src, int32_t channels) {
  for (int32_t c = 0; c < channels; c++) acc[c] += src[c];
}

TVMD_CMSIS_SIMD
static void max_pixel(int8_t* restrict out, const int8_t* restrict src, int32_t channels) {
  for (int32_t c = 0; c < channels; c++) out[c] = src[c] > out[c] ? src[c] : out[c];
}

/* ------------------------------------------------------------ M-profile */
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
/* The average of the sum a of count taps as int8. */
static inline int8_t average(int32_t a, int32_t count, const tvmd_cmsis_pool_params_t* p) {
  return (int8_t)tvmd_pool_average(a, count, p);
}

#if TVMD_CMSIS_MVE
static void max_window(const tvmd_pool_window_t* w, void* output, const tvmd_cmsis_pool_params_t* p) {
  int8_t* out = (int8_t*)output;
  const int8_t* first = (const int8_t*)w->first;
  for (int32_t c = 0; c < w->ch; c += 16) {
    const mve_pred16_t t = vctp8q((uint32_t)(w->ch - c));
    int8x16_t m = vdupq_n_s8(INT8_MIN);
    for (int32_t r = 0; r < w->rows; r++) {
      const int8_t* src = first + (size_t)r * w->row_step + (size_t)c;
      for (int32_t k = 0; k < w->cols; k++, src += w->ch) m = vmaxq_s8(m, vldrbq_z_s8(src, t));
    }
    m = vminq_s8(vmaxq_s8(m, vdupq_n_s8((int8_t)p->act_min)), vdupq_n_s8((int8_t)p->act_max));
    vstrbq_p_s8(out + c, m, t);
  }
}

static void avg_window(const tvmd_pool_window_t* w, void* output, const tvmd_cmsis_pool_params_t* p) {
  int8_t* out = (int8_t*)output;
  const int8_t* first = (const int8_t*)w->first;
  const int32_t count = w->rows * w->cols;
  for (int32_t c = 0; c < w->ch; c += 16) {
    const int32_t n = w->ch - c;
    const mve_pred16_t t0 = vctp32q((uint32_t)n), t1 = vctp32q((uint32_t)(n > 4 ? n - 4 : 0));
    const mve_pred16_t t2 = vctp32q((uint32_t)(n > 8 ? n - 8 : 0)), t3 = vctp32q((uint32_t)(n > 12 ? n - 12 : 0));
    int32x4_t s0 = vdupq_n_s32(0), s1 = s0, s2 = s0, s3 = s0;
    for (int32_t r = 0; r < w->rows; r++) {
      const int8_t* src = first + (size_t)r * w->row_step + (size_t)c;
      for (int32_t k = 0; k < w->cols; k++, src += w->ch) {
        s0 = vaddq_s32(s0, vldrbq_z_s32(src, t0));
        s1 = vaddq_s32(s1, vldrbq_z_s32(src + 4, t1));
        s2 = vaddq_s32(s2, vldrbq_z_s32(src + 8, t2));
        s3 = vaddq_s32(s3, vldrbq_z_s32(src + 12, t3));
      }
    }
    int32_t sums[16];
    vstrwq_s32(sums, s0);
    vstrwq_s32(sums + 4, s1);
    vstrwq_s32(sums + 8, s2);
    vstrwq_s32(sums + 12, s3);
    for (int32_t i = 0; i < (n < 16 ? n : 16); i++) out[c + i] = average(sums[i], count, p);
  }
}

#else /* TVMD_CMSIS_DSP */
static void max_window(const tvmd_pool_window_t* w, void* output, const tvmd_cmsis_pool_params_t* p) {
  int8_t* out = (int8_t*)output;
  const int8_t* first = (const int8_t*)w->first;
  const uint32_t lo = (uint8_t)p->act_min * 0x01010101u, hi = (uint8_t)p->act_max * 0x01010101u;
  int32_t c = 0;
  for (; c + 4 <= w->ch; c += 4) {
    uint32_t m = 0x80808080u; /* -128 in every byte */
    for (int32_t r = 0; r < w->rows; r++) {
      const int8_t* src = first + (size_t)r * w->row_step + (size_t)c;
      for (int32_t k = 0; k < w->cols; k++, src += w->ch) m = tvmd_cmsis_max_s8x4(m, tvmd_cmsis_read_s8x4(src));
    }
    m = tvmd_cmsis_min_s8x4(tvmd_cmsis_max_s8x4(m, lo), hi);
    memcpy(out + c, &m, sizeof m);
  }
  for (; c < w->ch; c++) {
    int32_t m = INT8_MIN;
    for (int32_t r = 0; r < w->rows; r++) {
      const int8_t* src = first + (size_t)r * w->row_step + (size_t)c;
      for (int32_t k = 0; k < w->cols; k++, src += w->ch) m = tvmd_cmsis_max(m, *src);
    }
    out[c] = (int8_t)tvmd_cmsis_min(tvmd_cmsis_max(m, p->act_min), p->act_max);
  }
}

/* Only for windows of at most 256 taps (the int16 sums). */
static void avg_window(const tvmd_pool_window_t* w, void* output, const tvmd_cmsis_pool_params_t* p) {
  int8_t* out = (int8_t*)output;
  const int8_t* first = (const int8_t*)w->first;
  const int32_t count = w->rows * w->cols;
  int32_t c = 0;
  for (; c + 4 <= w->ch; c += 4) {
    uint32_t s02 = 0, s13 = 0; /* channels c, c+2 and c+1, c+3 as int16 halves */
    for (int32_t r = 0; r < w->rows; r++) {
      const int8_t* src = first + (size_t)r * w->row_step + (size_t)c;
      for (int32_t k = 0; k < w->cols; k++, src += w->ch) {
        const uint32_t v = tvmd_cmsis_read_s8x4(src);
        s02 = (uint32_t)__sxtab16((int16x2_t)s02, (int8x4_t)v);
        s13 = (uint32_t)__sxtab16((int16x2_t)s13, (int8x4_t)(v >> 8));
      }
    }
    out[c] = average((int16_t)(s02 & 0xFFFFu), count, p);
    out[c + 1] = average((int16_t)(s13 & 0xFFFFu), count, p);
    out[c + 2] = average((int16_t)(s02 >> 16), count, p);
    out[c + 3] = average((int16_t)(s13 >> 16), count, p);
  }
  for (; c < w->ch; c++) {
    int32_t a = 0;
    for (int32_t r = 0; r < w->rows; r++) {
      const int8_t* src = first + (size_t)r * w->row_step + (size_t)c;
      for (int32_t k = 0; k < w->cols; k++, src += w->ch) a += *src;
    }
    out[c] = average(a, count, p);
  }
}
#endif

/* Every output pixel through avg_window or max_window (pooling_m.h's walk),
 * each walk a function of its own (kept out of the kernel, whose plain loop
 * would otherwise share its registers). */
static __attribute__((noinline)) int32_t avg_pool_m(const tvmd_cmsis_pool_params_t* p, const int8_t* input,
                                                    int8_t* output) {
  return tvmd_pool_m(p, input, output, 1, 1, avg_window);
}

static __attribute__((noinline)) int32_t max_pool_m(const tvmd_cmsis_pool_params_t* p, const int8_t* input,
                                                    int8_t* output) {
  return tvmd_pool_m(p, input, output, 1, 0, max_window);
}
#endif

int32_t tvmd_cmsis_avg_pool_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_pool_params_t* p = (const tvmd_cmsis_pool_params_t*)params;
  int32_t status = check(p, TVMD_CMSIS_KIND_AVG_POOL, buffers);
  if (status != TVMD_OK) return status;
  if (buffers[2] == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  status = tvmd_cmsis_enter(resource_handle, TVMD_CMSIS_KIND_AVG_POOL, 0);
  if (status != TVMD_OK) return status;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  int32_t* acc = (int32_t*)buffers[2];
  const int32_t ch = p->channels;
#if TVMD_CMSIS_MVE
  return avg_pool_m(p, input, output);
#elif TVMD_CMSIS_DSP
  if (p->filter_h * p->filter_w <= 256) return avg_pool_m(p, input, output);
#endif
#if TVMD_CMSIS_X86
  if (tvmd_cmsis_simd_level() >= TVMD_CMSIS_LEVEL_AVX2 && (int64_t)p->filter_h * p->filter_w <= 256) {
    return tvmd_cmsis_avg_pool_s8_avx2(p, input, output);
  }
#endif
  for (int32_t b = 0; b < p->batches; b++) {
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h;
      int32_t fy0, fy1;
      clip(iy0, p->filter_h, p->in_h, &fy0, &fy1);
      for (int32_t ox = 0; ox < p->out_w; ox++) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        int32_t fx0, fx1;
        clip(ix0, p->filter_w, p->in_w, &fx0, &fx1);
        const int32_t count = (fy1 - fy0) * (fx1 - fx0);
        if (fy1 <= fy0 || fx1 <= fx0) return TVMD_ERR_KERNEL; /* TFLM fails an empty window too */
        for (int32_t c = 0; c < ch; c++) acc[c] = 0;
        for (int32_t fy = fy0; fy < fy1; fy++) {
          for (int32_t fx = fx0; fx < fx1; fx++) {
            const size_t pixel = ((size_t)b * (size_t)p->in_h + (size_t)(iy0 + fy)) * (size_t)p->in_w +
                                 (size_t)(ix0 + fx);
            sum_pixel(acc, input + pixel * (size_t)ch, ch);
          }
        }
        int8_t* out = output + (((size_t)b * (size_t)p->out_h + (size_t)oy) * (size_t)p->out_w + (size_t)ox) *
                                   (size_t)ch;
        for (int32_t c = 0; c < ch; c++) {
          const int32_t a = acc[c];
          int32_t v = tvmd_rounded_average_i32(a, count);
          v = tvmd_cmsis_min(tvmd_cmsis_max(v, p->act_min), p->act_max);
          out[c] = (int8_t)v;
        }
      }
    }
  }
  return TVMD_OK;
}

int32_t tvmd_cmsis_max_pool_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_pool_params_t* p = (const tvmd_cmsis_pool_params_t*)params;
  int32_t status = check(p, TVMD_CMSIS_KIND_MAX_POOL, buffers);
  if (status != TVMD_OK) return status;
  status = tvmd_cmsis_enter(resource_handle, TVMD_CMSIS_KIND_MAX_POOL, 0);
  if (status != TVMD_OK) return status;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  const int32_t ch = p->channels;
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
  return max_pool_m(p, input, output);
#endif
#if TVMD_CMSIS_X86
  if (tvmd_cmsis_simd_level() >= TVMD_CMSIS_LEVEL_AVX2) return tvmd_cmsis_max_pool_s8_avx2(p, input, output);
#endif
  for (int32_t b = 0; b < p->batches; b++) {
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h;
      int32_t fy0, fy1;
      clip(iy0, p->filter_h, p->in_h, &fy0, &fy1);
      for (int32_t ox = 0; ox < p->out_w; ox++) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        int32_t fx0, fx1;
        clip(ix0, p->filter_w, p->in_w, &fx0, &fx1);
        int8_t* out = output + (((size_t)b * (size_t)p->out_h + (size_t)oy) * (size_t)p->out_w + (size_t)ox) *
                                   (size_t)ch;
        for (int32_t c = 0; c < ch; c++) out[c] = INT8_MIN;
        for (int32_t fy = fy0; fy < fy1; fy++) {
          for (int32_t fx = fx0; fx < fx1; fx++) {
            const size_t pixel = ((size_t)b * (size_t)p->in_h + (size_t)(iy0 + fy)) * (size_t)p->in_w +
                                 (size_t)(ix0 + fx);
            max_pixel(out, input + pixel * (size_t)ch, ch);
          }
        }
        for (int32_t c = 0; c < ch; c++) {
          out[c] = (int8_t)tvmd_cmsis_min(tvmd_cmsis_max(out[c], p->act_min), p->act_max);
        }
      }
    }
  }
  return TVMD_OK;
}
