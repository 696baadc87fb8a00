/*
 * TRANSPOSE of up to 4 dimensions (CMSIS-NN's arm_transpose_s8 / _s16;
 * TFLM's reference Transpose, whose values the tests check): the output
 * walked in order, each element read from the input through the permuted
 * strides of the params (shape right-aligned to 4, checked at prepare).
 */
#include "internal.h"

size_t tvmd_cmsis_transpose_get_buffer_size(const tvmd_cmsis_transpose_params_t* p) {
  (void)p;
  return 0;
}

#define TVMD_CMSIS_TRANSPOSE_LOOP(T)                                                              \
  do {                                                                                            \
    const T* in = (const T*)buffers[0];                                                       \
    T* out = (T*)buffers[2];                                                                      \
    for (int32_t i0 = 0; i0 < p->out_shape[0]; ++i0) {                                            \
      for (int32_t i1 = 0; i1 < p->out_shape[1]; ++i1) {                                          \
        for (int32_t i2 = 0; i2 < p->out_shape[2]; ++i2) {                                        \
          const T* row = in + (size_t)i0 * (size_t)p->strides[0] + (size_t)i1 * (size_t)p->strides[1] + \
                         (size_t)i2 * (size_t)p->strides[2];                                      \
          for (int32_t i3 = 0; i3 < p->out_shape[3]; ++i3) *out++ = row[(size_t)i3 * (size_t)p->strides[3]]; \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  } while (0)

int32_t tvmd_cmsis_transpose(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_transpose_params_t* p = (const tvmd_cmsis_transpose_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_TRANSPOSE || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  /* buffers: input, perm (unused: the strides hold it), output */
  if (buffers[0] == NULL || buffers[2] == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int32_t status = tvmd_cmsis_enter(resource_handle, TVMD_CMSIS_KIND_TRANSPOSE, 0);
  if (status != TVMD_OK) return status;
  if (p->itemsize == 1) {
    TVMD_CMSIS_TRANSPOSE_LOOP(int8_t);
  } else if (p->itemsize == 2) {
    TVMD_CMSIS_TRANSPOSE_LOOP(int16_t);
  } else {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  return TVMD_OK;
}
