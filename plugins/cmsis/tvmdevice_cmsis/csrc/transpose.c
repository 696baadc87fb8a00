/*
 * TRANSPOSE of up to 4 dimensions (CMSIS-NN's arm_transpose_s8 / _s16;
 * TFLM's reference Transpose, whose values the tests check): the output
 * walked in order, each element read from the input through the permuted
 * strides of the params (shape right-aligned to 4, checked at prepare).
 *
 * On a Cortex-M (mprofile.h) an innermost run of at least 8 elements is one
 * copy: a memcpy when it is contiguous in the input (the last axis stays
 * last), else with Helium (MVE, runs of 16 or more) eight elements per
 * gather load (VLDRB / VLDRH with offsets i * stride, while 7 * stride fits
 * their 16-bit offsets) and one predicated store; shorter runs, and the
 * strided ones on DSP and plain C, go element by element (below).
 */
#include "internal.h"
#include "mprofile.h"

size_t tvmd_cmsis_transpose_get_buffer_size(const tvmd_cmsis_transpose_params_t* p) {
  (void)p;
  return 0;
}

/* The element-by-element run (every CPU). */
#define TVMD_TRANSPOSE_EACH(T, suffix)                                                             \
  for (int32_t i3 = 0; i3 < p->out_shape[3]; ++i3) *out++ = row[(size_t)i3 * (size_t)p->strides[3]]

#define TVMD_CMSIS_TRANSPOSE_LOOP(T, suffix, inner)                                               \
  do {                                                                                            \
    const T* in = (const T*)buffers[0];                                                           \
    T* out = (T*)buffers[2];                                                                      \
    for (int32_t i0 = 0; i0 < p->out_shape[0]; ++i0) {                                            \
      for (int32_t i1 = 0; i1 < p->out_shape[1]; ++i1) {                                          \
        for (int32_t i2 = 0; i2 < p->out_shape[2]; ++i2) {                                        \
          const T* row = in + (size_t)i0 * (size_t)p->strides[0] + (size_t)i1 * (size_t)p->strides[1] + \
                         (size_t)i2 * (size_t)p->strides[2];                                      \
          inner(T, suffix);                                                                       \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  } while (0)

#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
/* A contiguous run of n >= 8 elements: one copy. */
#define TVMD_TRANSPOSE_COPY(T, suffix)                                                             \
  do {                                                                                            \
    memcpy(out, row, (size_t)p->out_shape[3] * sizeof(T));                                        \
    out += p->out_shape[3];                                                                       \
  } while (0)
#endif

#if TVMD_CMSIS_MVE
/* A strided run of n >= 16 elements (7 * stride <= UINT16_MAX), eight per gather. */
static void gather_s8(int8_t* out, const int8_t* row, int32_t n, int32_t stride) {
  const uint16x8_t offsets = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)stride);
  for (int32_t i = 0; i < n; i += 8, row += 8 * (size_t)stride) {
    const mve_pred16_t t = vctp16q((uint32_t)(n - i));
    vstrbq_p_s16(out + i, vldrbq_gather_offset_z_s16(row, offsets, t), t);
  }
}

static void gather_s16(int16_t* out, const int16_t* row, int32_t n, int32_t stride) {
  const uint16x8_t offsets = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)stride);
  for (int32_t i = 0; i < n; i += 8, row += 8 * (size_t)stride) {
    const mve_pred16_t t = vctp16q((uint32_t)(n - i));
    vstrhq_p_s16(out + i, vldrhq_gather_shifted_offset_z_s16(row, offsets, t), t);
  }
}

#define TVMD_TRANSPOSE_GATHER(T, suffix)                                                           \
  do {                                                                                            \
    gather_##suffix(out, row, p->out_shape[3], p->strides[3]);                                    \
    out += p->out_shape[3];                                                                       \
  } while (0)
#endif

/* The loop for element type T, its run chosen once per call. */
#if TVMD_CMSIS_MVE
#define TVMD_TRANSPOSE(T, suffix)                                                                  \
  do {                                                                                            \
    const int32_t n3 = p->out_shape[3], s3 = p->strides[3];                                       \
    if (s3 == 1 && n3 >= 8) TVMD_CMSIS_TRANSPOSE_LOOP(T, suffix, TVMD_TRANSPOSE_COPY);            \
    else if (n3 >= 16 && 7 * s3 <= UINT16_MAX) TVMD_CMSIS_TRANSPOSE_LOOP(T, suffix, TVMD_TRANSPOSE_GATHER); \
    else TVMD_CMSIS_TRANSPOSE_LOOP(T, suffix, TVMD_TRANSPOSE_EACH);                               \
  } while (0)
#elif TVMD_CMSIS_DSP
#define TVMD_TRANSPOSE(T, suffix)                                                                  \
  do {                                                                                            \
    if (p->strides[3] == 1 && p->out_shape[3] >= 8) TVMD_CMSIS_TRANSPOSE_LOOP(T, suffix, TVMD_TRANSPOSE_COPY); \
    else TVMD_CMSIS_TRANSPOSE_LOOP(T, suffix, TVMD_TRANSPOSE_EACH);                               \
  } while (0)
#else
#define TVMD_TRANSPOSE(T, suffix) TVMD_CMSIS_TRANSPOSE_LOOP(T, suffix, TVMD_TRANSPOSE_EACH)
#endif

int32_t tvmd_cmsis_transpose(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_transpose_params_t* p = (const tvmd_cmsis_transpose_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_TRANSPOSE || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  /* buffers: input, perm (unused: the strides hold it), output */
  if (buffers[0] == NULL || buffers[2] == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int32_t status = tvmd_cmsis_enter(resource_handle, TVMD_CMSIS_KIND_TRANSPOSE, 0);
  if (status != TVMD_OK) return status;
  if (p->itemsize == 1) {
    TVMD_TRANSPOSE(int8_t, s8);
  } else if (p->itemsize == 2) {
    TVMD_TRANSPOSE(int16_t, s16);
  } else {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  return TVMD_OK;
}
