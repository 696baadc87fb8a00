/*
 * PAD and PADV2, int8: CMSIS-NN's arm_pad_s8.  The output is written in
 * order, N, H, W, C: whole padded batches, rows and pixels are filled with the
 * pad value, and each input row of W * C values is copied between its
 * leading and trailing fill.  Values are moved, never rescaled (TFLM's pad
 * Prepare: input and output share their quantization); the fill is PADV2's
 * constant_values or the output zero point.  Shapes were validated in Python.
 */
#include <string.h>

#include "internal.h"

size_t tvmd_cmsis_pad_s8_get_buffer_size(const tvmd_cmsis_pad_params_t* p) {
  (void)p;
  return 0;
}

size_t tvmd_cmsis_padv2_s8_get_buffer_size(const tvmd_cmsis_pad_params_t* p) {
  (void)p;
  return 0;
}

static int32_t pad_s8(const tvmd_cmsis_pad_params_t* p, void* const* buffers, void* resource_handle,
                      uint32_t kind) {
  if (p == NULL || p->kind != kind || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int8_t* in = (const int8_t*)buffers[0];
  int8_t* out = (int8_t*)buffers[p->num_inputs];
  if (in == NULL || out == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int32_t status = tvmd_cmsis_enter(resource_handle, kind, 0);
  if (status != TVMD_OK) return status;

  const int fill = (int)(int8_t)p->pad_value;
  const size_t c = (size_t)p->in_shape[3];
  const size_t out_c = (size_t)(p->before[3] + p->in_shape[3] + p->after[3]);
  const size_t out_w = (size_t)(p->before[2] + p->in_shape[2] + p->after[2]);
  const size_t out_h = (size_t)(p->before[1] + p->in_shape[1] + p->after[1]);
  const size_t out_row = out_w * out_c, out_image = out_h * out_row;

  memset(out, fill, (size_t)p->before[0] * out_image);
  out += (size_t)p->before[0] * out_image;
  for (int32_t n = 0; n < p->in_shape[0]; n++) {
    memset(out, fill, (size_t)p->before[1] * out_row);
    out += (size_t)p->before[1] * out_row;
    for (int32_t h = 0; h < p->in_shape[1]; h++) {
      memset(out, fill, (size_t)p->before[2] * out_c);
      out += (size_t)p->before[2] * out_c;
      for (int32_t w = 0; w < p->in_shape[2]; w++) {
        memset(out, fill, (size_t)p->before[3]);
        memcpy(out + p->before[3], in, c);
        memset(out + (size_t)p->before[3] + c, fill, (size_t)p->after[3]);
        out += out_c;
        in += c;
      }
      memset(out, fill, (size_t)p->after[2] * out_c);
      out += (size_t)p->after[2] * out_c;
    }
    memset(out, fill, (size_t)p->after[1] * out_row);
    out += (size_t)p->after[1] * out_row;
  }
  memset(out, fill, (size_t)p->after[0] * out_image);
  return TVMD_OK;
}

int32_t tvmd_cmsis_pad_s8(const void* params, void* const* buffers, void* resource_handle) {
  return pad_s8((const tvmd_cmsis_pad_params_t*)params, buffers, resource_handle, TVMD_CMSIS_KIND_PAD);
}

int32_t tvmd_cmsis_padv2_s8(const void* params, void* const* buffers, void* resource_handle) {
  return pad_s8((const tvmd_cmsis_pad_params_t*)params, buffers, resource_handle, TVMD_CMSIS_KIND_PADV2);
}
