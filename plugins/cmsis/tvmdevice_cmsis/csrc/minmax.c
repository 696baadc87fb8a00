/*
 * MAXIMUM and MINIMUM, int8: CMSIS-NN's arm_maximum_s8 / arm_minimum_s8
 * (TFLM's raw comparison, no requantization).  Equal shapes run as one flat
 * pass; broadcasting walks the output's [n, h, w, c] dims, an input of
 * extent 1 along a dimension repeating its value.
 *
 * On a Cortex-M (mprofile.h) the walk goes a run of the innermost dimension
 * at a time (the whole tensor when the shapes are equal), an input of extent
 * 1 there repeating one value: Helium (MVE) sixteen lanes per VMAX / VMIN,
 * the last step tail-predicated; DSP four bytes per word (SSUB8, SEL);
 * plain C (Cortex-M0/M3, the host) element by element, below.  On x86-64
 * the AVX2 runs (simd_x86_elementwise.c) go 32 bytes a step over the
 * longest suffix of dimensions each input is contiguous or constant over.
 */
#include "internal.h"
#include "mprofile.h"

static size_t offset4(const int32_t* dims, int32_t n, int32_t h, int32_t w, int32_t c) {
  /* A dimension of extent 1 contributes index 0: broadcasting. */
  const int32_t in = dims[0] == 1 ? 0 : n, ih = dims[1] == 1 ? 0 : h, iw = dims[2] == 1 ? 0 : w,
                ic = dims[3] == 1 ? 0 : c;
  return (((size_t)in * (size_t)dims[1] + (size_t)ih) * (size_t)dims[2] + (size_t)iw) * (size_t)dims[3] + (size_t)ic;
}

#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
/* out[i] = max or min of a[i * sa] and b[i * sb], i < n (steps 0 or 1). */
static void run_m(const int8_t* a, int32_t sa, const int8_t* b, int32_t sb, int8_t* out, int32_t n, int is_max) {
  int32_t i = 0;
#if TVMD_CMSIS_MVE
  const int8x16_t ca = vdupq_n_s8(a[0]), cb = vdupq_n_s8(b[0]);
  for (; i < n; i += 16) {
    const mve_pred16_t t = vctp8q((uint32_t)(n - i));
    const int8x16_t x = sa ? vldrbq_z_s8(a + i, t) : ca, y = sb ? vldrbq_z_s8(b + i, t) : cb;
    vstrbq_p_s8(out + i, is_max ? vmaxq_s8(x, y) : vminq_s8(x, y), t);
  }
#else
  const uint32_t ca = (uint8_t)a[0] * 0x01010101u, cb = (uint8_t)b[0] * 0x01010101u;
  for (; i + 4 <= n; i += 4) {
    const uint32_t x = sa ? tvmd_cmsis_read_s8x4(a + i) : ca, y = sb ? tvmd_cmsis_read_s8x4(b + i) : cb;
    const uint32_t r = is_max ? tvmd_cmsis_max_s8x4(x, y) : tvmd_cmsis_min_s8x4(x, y);
    memcpy(out + i, &r, sizeof r);
  }
  for (; i < n; i++) {
    const int8_t x = a[i * sa], y = b[i * sb];
    out[i] = is_max ? (x > y ? x : y) : (x < y ? x : y);
  }
#endif
}

/* The whole operator as runs of the innermost dimension. */
static void minmax_m(const tvmd_cmsis_minmax_params_t* p, const int8_t* a, const int8_t* b, int8_t* out,
                     int is_max) {
  const int32_t* d = p->dims;
  if (memcmp(p->in1_dims, d, sizeof p->dims) == 0 && memcmp(p->in2_dims, d, sizeof p->dims) == 0) {
    run_m(a, 1, b, 1, out, p->size, is_max);
    return;
  }
  const int32_t sa = p->in1_dims[3] == 1 ? 0 : 1, sb = p->in2_dims[3] == 1 ? 0 : 1;
  for (int32_t n = 0; n < d[0]; ++n) {
    for (int32_t h = 0; h < d[1]; ++h) {
      for (int32_t w = 0; w < d[2]; ++w, out += d[3]) {
        run_m(a + offset4(p->in1_dims, n, h, w, 0), sa, b + offset4(p->in2_dims, n, h, w, 0), sb, out, d[3], is_max);
      }
    }
  }
}
#endif

#if TVMD_CMSIS_X86
/* An input's element step along dimension j: 0 where it is broadcast. */
static size_t step4(const int32_t* dims, int32_t j) {
  if (dims[j] == 1) return 0;
  size_t step = 1;
  for (int32_t i = j + 1; i < 4; i++) step *= (size_t)dims[i];
  return step;
}

/* The AVX2 path: the output as runs, each the longest suffix of dims over
 * which both inputs are either contiguous (the output's extents) or one
 * value (extents 1), so a scalar or a per-channel operand runs the whole
 * tensor or whole rows at once; the runs along the last dimension before
 * that suffix go to the AVX2 code as rows of one call (a per-channel
 * operand: every pixel of an image row in one call). */
static void minmax_avx2(const tvmd_cmsis_minmax_params_t* p, const int8_t* a, const int8_t* b, int8_t* out,
                        int is_max) {
  const int32_t* d = p->dims;
  int full1 = 1, one1 = 1, full2 = 1, one2 = 1, k = 4;
  int32_t run = 1;
  for (; k > 0; k--) {
    const int32_t j = k - 1;
    const int f1 = full1 && p->in1_dims[j] == d[j], o1 = one1 && p->in1_dims[j] == 1;
    const int f2 = full2 && p->in2_dims[j] == d[j], o2 = one2 && p->in2_dims[j] == 1;
    if (!(f1 || o1) || !(f2 || o2)) break;
    full1 = f1;
    one1 = o1;
    full2 = f2;
    one2 = o2;
    run *= d[j];
  }
  const int32_t sa = full1 ? 1 : 0, sb = full2 ? 1 : 0;
  /* Dimension k - 1 (if any) is the rows'; the ones before it are walked here. */
  const int32_t rows = k > 0 ? d[k - 1] : 1;
  const size_t a_row = k > 0 ? step4(p->in1_dims, k - 1) : 0, b_row = k > 0 ? step4(p->in2_dims, k - 1) : 0;
  int32_t lim[4];
  for (int32_t j = 0; j < 4; j++) lim[j] = j < k - 1 ? d[j] : 1;
  for (int32_t n = 0; n < lim[0]; ++n) {
    for (int32_t h = 0; h < lim[1]; ++h) {
      for (int32_t w = 0; w < lim[2]; ++w, out += (size_t)run * (size_t)rows) {
        tvmd_cmsis_minmax_rows_s8_avx2(a + offset4(p->in1_dims, n, h, w, 0), sa, a_row,
                                       b + offset4(p->in2_dims, n, h, w, 0), sb, b_row, run, rows, is_max, out);
      }
    }
  }
}
#endif

static int32_t minmax(const void* params, void* const* buffers, void* resource_handle, uint32_t kind) {
  const tvmd_cmsis_minmax_params_t* p = (const tvmd_cmsis_minmax_params_t*)params;
  if (p == NULL || p->kind != kind || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int8_t* a = (const int8_t*)buffers[0];
  const int8_t* b = (const int8_t*)buffers[1];
  int8_t* out = (int8_t*)buffers[2];
  if (a == NULL || b == NULL || out == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int32_t status = tvmd_cmsis_enter(resource_handle, kind, 0);
  if (status != TVMD_OK) return status;
  const int is_max = kind == TVMD_CMSIS_KIND_MAXIMUM;
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
  minmax_m(p, a, b, out, is_max);
  return TVMD_OK;
#endif
#if TVMD_CMSIS_X86
  if (tvmd_cmsis_simd_level() >= TVMD_CMSIS_LEVEL_AVX2) {
    minmax_avx2(p, a, b, out, is_max);
    return TVMD_OK;
  }
#endif
  const int32_t* d = p->dims;
  if (d[0] == 1 && d[1] == 1 && d[2] == 1 && p->in1_dims[3] == d[3] && p->in2_dims[3] == d[3]) {
    for (int32_t i = 0; i < p->size; ++i) {
      const int8_t x = a[i], y = b[i];
      out[i] = is_max ? (x > y ? x : y) : (x < y ? x : y);
    }
    return TVMD_OK;
  }
  for (int32_t n = 0; n < d[0]; ++n) {
    for (int32_t h = 0; h < d[1]; ++h) {
      for (int32_t w = 0; w < d[2]; ++w) {
        for (int32_t c = 0; c < d[3]; ++c) {
          const int8_t x = a[offset4(p->in1_dims, n, h, w, c)], y = b[offset4(p->in2_dims, n, h, w, c)];
          *out++ = is_max ? (x > y ? x : y) : (x < y ? x : y);
        }
      }
    }
  }
  return TVMD_OK;
}

size_t tvmd_cmsis_maximum_s8_get_buffer_size(const tvmd_cmsis_minmax_params_t* p) {
  (void)p;
  return 0;
}

size_t tvmd_cmsis_minimum_s8_get_buffer_size(const tvmd_cmsis_minmax_params_t* p) {
  (void)p;
  return 0;
}

int32_t tvmd_cmsis_maximum_s8(const void* params, void* const* buffers, void* resource_handle) {
  return minmax(params, buffers, resource_handle, TVMD_CMSIS_KIND_MAXIMUM);
}

int32_t tvmd_cmsis_minimum_s8(const void* params, void* const* buffers, void* resource_handle) {
  return minmax(params, buffers, resource_handle, TVMD_CMSIS_KIND_MINIMUM);
}
