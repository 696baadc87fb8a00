/*
 * AVERAGE_POOL_2D and MAX_POOL_2D on int16 (CMSIS-NN's arm_avgpool_s16 /
 * arm_max_pool_s16; TFLM's reference_integer_ops AveragePool / MaxPool for
 * int16, whose values the tests check).  Windows are clipped to the image;
 * the average divides by the taps inside it, rounding half away from zero
 * with C's truncating division; the maximum starts from -32768.  Input and
 * output share their quantization (checked at prepare), so only the
 * activation clamp is applied.  The average keeps one pixel's channel sums in
 * scratch (channels int32, planned by the size query).
 *
 * On a Cortex-M (mprofile.h) each output pixel goes a group of channels at a
 * time through its whole window, the running values in registers (the walk
 * in pooling_m.h, shared with the int8 kernels; no scratch used):
 *  - Helium (MVE): MAX eight int16 lanes (VMAX), AVERAGE eight channels as
 *    two int32 vectors of sums (VLDRH.S32); the last group tail-predicated;
 *  - DSP: MAX two channels per word (SSUB16 sets the GE flags of each half
 *    where a >= b, SEL picks the larger), AVERAGE four channels per word
 *    pair into int32 sums (SXTAH and ASR); leftover channels one at a time;
 *  - plain C (Cortex-M0/M3, the host): the loops below.
 * The average's rounding division stays scalar (SDIV) on every path.
 */
#include "internal.h"
#include "pooling_m.h"

size_t tvmd_cmsis_avg_pool_s16_get_buffer_size(const tvmd_cmsis_pool_params_t* p) {
  return (size_t)p->channels * sizeof(int32_t);
}

size_t tvmd_cmsis_max_pool_s16_get_buffer_size(const tvmd_cmsis_pool_params_t* p) {
  (void)p;
  return 0;
}

static void clip(int32_t origin, int32_t filter, int32_t size, int32_t* start, int32_t* end) {
  *start = tvmd_cmsis_max(0, -origin);
  *end = tvmd_cmsis_min(filter, size - origin);
}

static int32_t start(const tvmd_cmsis_pool_params_t* p, uint32_t kind, void* const* buffers, int with_scratch,
                     void* resource_handle) {
  if (p == NULL || p->kind != kind || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (buffers[0] == NULL || buffers[1] == NULL || (with_scratch && buffers[2] == NULL)) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  return tvmd_cmsis_enter(resource_handle, kind, 0);
}

/* ------------------------------------------------------------ M-profile */
#if TVMD_CMSIS_MVE
static void max_window(const tvmd_pool_window_t* w, void* output, const tvmd_cmsis_pool_params_t* p) {
  int16_t* out = (int16_t*)output;
  const int16_t* first = (const int16_t*)w->first;
  for (int32_t c = 0; c < w->ch; c += 8) {
    const mve_pred16_t t = vctp16q((uint32_t)(w->ch - c));
    int16x8_t m = vdupq_n_s16(INT16_MIN);
    for (int32_t r = 0; r < w->rows; r++) {
      const int16_t* src = first + (size_t)r * w->row_step + (size_t)c;
      for (int32_t k = 0; k < w->cols; k++, src += w->ch) m = vmaxq_s16(m, vldrhq_z_s16(src, t));
    }
    m = vminq_s16(vmaxq_s16(m, vdupq_n_s16((int16_t)p->act_min)), vdupq_n_s16((int16_t)p->act_max));
    vstrhq_p_s16(out + c, m, t);
  }
}

static void avg_window(const tvmd_pool_window_t* w, void* output, const tvmd_cmsis_pool_params_t* p) {
  int16_t* out = (int16_t*)output;
  const int16_t* first = (const int16_t*)w->first;
  const int32_t count = w->rows * w->cols;
  for (int32_t c = 0; c < w->ch; c += 8) {
    const int32_t n = w->ch - c;
    const mve_pred16_t t0 = vctp32q((uint32_t)n), t1 = vctp32q((uint32_t)(n > 4 ? n - 4 : 0));
    int32x4_t s0 = vdupq_n_s32(0), s1 = s0;
    for (int32_t r = 0; r < w->rows; r++) {
      const int16_t* src = first + (size_t)r * w->row_step + (size_t)c;
      for (int32_t k = 0; k < w->cols; k++, src += w->ch) {
        s0 = vaddq_s32(s0, vldrhq_z_s32(src, t0)); /* |sum| <= 2^15 * taps: checked at prepare */
        s1 = vaddq_s32(s1, vldrhq_z_s32(src + 4, t1));
      }
    }
    int32_t sums[8];
    vstrwq_s32(sums, s0);
    vstrwq_s32(sums + 4, s1);
    for (int32_t i = 0; i < (n < 8 ? n : 8); i++) out[c + i] = (int16_t)tvmd_pool_average(sums[i], count, p);
  }
}

#elif TVMD_CMSIS_DSP
/* Halfwise max / min of two words of two int16: SSUB16 sets the GE flags of
 * each half where a >= b, SEL takes those bytes from its first operand. */
static inline uint32_t max_s16x2(uint32_t a, uint32_t b) {
  (void)__ssub16((int16x2_t)a, (int16x2_t)b);
  return (uint32_t)__sel((int8x4_t)a, (int8x4_t)b);
}

static inline uint32_t min_s16x2(uint32_t a, uint32_t b) {
  (void)__ssub16((int16x2_t)a, (int16x2_t)b);
  return (uint32_t)__sel((int8x4_t)b, (int8x4_t)a);
}

static void max_window(const tvmd_pool_window_t* w, void* output, const tvmd_cmsis_pool_params_t* p) {
  int16_t* out = (int16_t*)output;
  const int16_t* first = (const int16_t*)w->first;
  const uint32_t lo = (uint16_t)p->act_min * 0x00010001u, hi = (uint16_t)p->act_max * 0x00010001u;
  int32_t c = 0;
  for (; c + 4 <= w->ch; c += 4) {
    uint32_t m0 = 0x80008000u, m1 = 0x80008000u; /* -32768 in every half */
    for (int32_t r = 0; r < w->rows; r++) {
      const int16_t* src = first + (size_t)r * w->row_step + (size_t)c;
      for (int32_t k = 0; k < w->cols; k++, src += w->ch) {
        m0 = max_s16x2(m0, tvmd_cmsis_read_s16x2(src));
        m1 = max_s16x2(m1, tvmd_cmsis_read_s16x2(src + 2));
      }
    }
    m0 = min_s16x2(max_s16x2(m0, lo), hi);
    m1 = min_s16x2(max_s16x2(m1, lo), hi);
    memcpy(out + c, &m0, sizeof m0);
    memcpy(out + c + 2, &m1, sizeof m1);
  }
  for (; c < w->ch; c++) {
    int32_t m = INT16_MIN;
    for (int32_t r = 0; r < w->rows; r++) {
      const int16_t* src = first + (size_t)r * w->row_step + (size_t)c;
      for (int32_t k = 0; k < w->cols; k++, src += w->ch) m = tvmd_cmsis_max(m, *src);
    }
    out[c] = (int16_t)tvmd_cmsis_min(tvmd_cmsis_max(m, p->act_min), p->act_max);
  }
}

static void avg_window(const tvmd_pool_window_t* w, void* output, const tvmd_cmsis_pool_params_t* p) {
  int16_t* out = (int16_t*)output;
  const int16_t* first = (const int16_t*)w->first;
  const int32_t count = w->rows * w->cols;
  int32_t c = 0;
  for (; c + 4 <= w->ch; c += 4) {
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int32_t r = 0; r < w->rows; r++) {
      const int16_t* src = first + (size_t)r * w->row_step + (size_t)c;
      for (int32_t k = 0; k < w->cols; k++, src += w->ch) {
        const uint32_t v01 = tvmd_cmsis_read_s16x2(src), v23 = tvmd_cmsis_read_s16x2(src + 2);
        s0 += (int16_t)(v01 & 0xFFFFu);
        s1 += (int16_t)(v01 >> 16);
        s2 += (int16_t)(v23 & 0xFFFFu);
        s3 += (int16_t)(v23 >> 16);
      }
    }
    out[c] = (int16_t)tvmd_pool_average(s0, count, p);
    out[c + 1] = (int16_t)tvmd_pool_average(s1, count, p);
    out[c + 2] = (int16_t)tvmd_pool_average(s2, count, p);
    out[c + 3] = (int16_t)tvmd_pool_average(s3, count, p);
  }
  for (; c < w->ch; c++) {
    int32_t a = 0;
    for (int32_t r = 0; r < w->rows; r++) {
      const int16_t* src = first + (size_t)r * w->row_step + (size_t)c;
      for (int32_t k = 0; k < w->cols; k++, src += w->ch) a += *src;
    }
    out[c] = (int16_t)tvmd_pool_average(a, count, p);
  }
}
#endif

#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
/* Each walk a function of its own, as in pooling.c. */
static __attribute__((noinline)) int32_t avg_pool_m(const tvmd_cmsis_pool_params_t* p, const int16_t* input,
                                                    int16_t* output) {
  return tvmd_pool_m(p, input, output, 2, 1, avg_window);
}

static __attribute__((noinline)) int32_t max_pool_m(const tvmd_cmsis_pool_params_t* p, const int16_t* input,
                                                    int16_t* output) {
  return tvmd_pool_m(p, input, output, 2, 0, max_window);
}
#endif

static inline const int16_t* pixel_at(const int16_t* input, const tvmd_cmsis_pool_params_t* p, int32_t b,
                                      int32_t y, int32_t x) {
  return input + (((size_t)b * (size_t)p->in_h + (size_t)y) * (size_t)p->in_w + (size_t)x) * (size_t)p->channels;
}

int32_t tvmd_cmsis_avg_pool_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_pool_params_t* p = (const tvmd_cmsis_pool_params_t*)params;
  const int32_t status = start(p, TVMD_CMSIS_KIND_AVG_POOL_S16, buffers, 1, resource_handle);
  if (status != TVMD_OK) return status;
  const int16_t* input = (const int16_t*)buffers[0];
  int16_t* out = (int16_t*)buffers[1];
  int32_t* acc = (int32_t*)buffers[2];
  const int32_t ch = p->channels;
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
  return avg_pool_m(p, input, out);
#endif
  for (int32_t b = 0; b < p->batches; b++) {
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h;
      int32_t fy0, fy1;
      clip(iy0, p->filter_h, p->in_h, &fy0, &fy1);
      for (int32_t ox = 0; ox < p->out_w; ox++, out += ch) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        int32_t fx0, fx1;
        clip(ix0, p->filter_w, p->in_w, &fx0, &fx1);
        if (fy1 <= fy0 || fx1 <= fx0) return TVMD_ERR_KERNEL; /* TFLM fails an empty window too */
        const int32_t count = (fy1 - fy0) * (fx1 - fx0);
        for (int32_t c = 0; c < ch; c++) acc[c] = 0;
        for (int32_t fy = fy0; fy < fy1; fy++) {
          for (int32_t fx = fx0; fx < fx1; fx++) {
            const int16_t* src = pixel_at(input, p, b, iy0 + fy, ix0 + fx);
            for (int32_t c = 0; c < ch; c++) acc[c] += src[c]; /* <= 2^15 * window taps: checked at prepare */
          }
        }
        for (int32_t c = 0; c < ch; c++) {
          const int32_t a = acc[c];
          const int32_t v = tvmd_rounded_average_i32(a, count);
          out[c] = (int16_t)tvmd_cmsis_min(tvmd_cmsis_max(v, p->act_min), p->act_max);
        }
      }
    }
  }
  return TVMD_OK;
}

int32_t tvmd_cmsis_max_pool_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_pool_params_t* p = (const tvmd_cmsis_pool_params_t*)params;
  const int32_t status = start(p, TVMD_CMSIS_KIND_MAX_POOL_S16, buffers, 0, resource_handle);
  if (status != TVMD_OK) return status;
  const int16_t* input = (const int16_t*)buffers[0];
  int16_t* out = (int16_t*)buffers[1];
  const int32_t ch = p->channels;
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
  return max_pool_m(p, input, out);
#endif
  for (int32_t b = 0; b < p->batches; b++) {
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h;
      int32_t fy0, fy1;
      clip(iy0, p->filter_h, p->in_h, &fy0, &fy1);
      for (int32_t ox = 0; ox < p->out_w; ox++, out += ch) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        int32_t fx0, fx1;
        clip(ix0, p->filter_w, p->in_w, &fx0, &fx1);
        for (int32_t c = 0; c < ch; c++) out[c] = INT16_MIN;
        for (int32_t fy = fy0; fy < fy1; fy++) {
          for (int32_t fx = fx0; fx < fx1; fx++) {
            const int16_t* src = pixel_at(input, p, b, iy0 + fy, ix0 + fx);
            for (int32_t c = 0; c < ch; c++) out[c] = src[c] > out[c] ? src[c] : out[c];
          }
        }
        for (int32_t c = 0; c < ch; c++) out[c] = (int16_t)tvmd_cmsis_min(tvmd_cmsis_max(out[c], p->act_min), p->act_max);
      }
    }
  }
  return TVMD_OK;
}
