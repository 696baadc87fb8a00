/*
 * MAXIMUM and MINIMUM, int8: CMSIS-NN's arm_maximum_s8 / arm_minimum_s8
 * (TFLM's raw comparison, no requantization).  Equal shapes run as one flat
 * pass; broadcasting walks the output's [n, h, w, c] dims, an input of
 * extent 1 along a dimension repeating its value.
 */
#include "internal.h"

static size_t offset4(const int32_t* dims, int32_t n, int32_t h, int32_t w, int32_t c) {
  /* A dimension of extent 1 contributes index 0: broadcasting. */
  const int32_t in = dims[0] == 1 ? 0 : n, ih = dims[1] == 1 ? 0 : h, iw = dims[2] == 1 ? 0 : w,
                ic = dims[3] == 1 ? 0 : c;
  return (((size_t)in * (size_t)dims[1] + (size_t)ih) * (size_t)dims[2] + (size_t)iw) * (size_t)dims[3] + (size_t)ic;
}

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
  const int32_t* d = p->dims;
  if (d[0] == 1 && d[1] == 1 && d[2] == 1 && p->in1_dims[3] == d[3] && p->in2_dims[3] == d[3]) {
#if TVMD_CMSIS_X86
    if (tvmd_cmsis_simd_level() >= TVMD_CMSIS_LEVEL_AVX2) {
      tvmd_cmsis_minmax_s8_avx2(a, b, p->size, is_max, out);
      return TVMD_OK;
    }
#endif
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
