/*
 * PAD and PADV2, int8 and int16: CMSIS-NN's arm_pad_s8, and the same walk for
 * 16-bit values (TFLM's pad kernel takes both).  The output is written in
 * order, N, H, W, C: whole padded batches, rows and pixels are filled with the
 * pad value, and each input row of W * C values is copied between its
 * leading and trailing fill.  Values are moved, never rescaled (TFLM's pad
 * Prepare: input and output share their quantization); the fill is PADV2's
 * constant_values or the output zero point.  Shapes and the element size
 * were validated in Python.
 */
#include <string.h>

#include "internal.h"

size_t tvmd_cmsis_pad_get_buffer_size(const tvmd_cmsis_pad_params_t* p) {
  (void)p;
  return 0;
}

size_t tvmd_cmsis_padv2_get_buffer_size(const tvmd_cmsis_pad_params_t* p) {
  (void)p;
  return 0;
}

/* count values of the pad value at out; returns the byte after them. */
static uint8_t* fill(uint8_t* out, size_t count, int32_t value, size_t itemsize) {
  if (itemsize == 1) {
    memset(out, (int)(int8_t)value, count);
  } else {
    const int16_t v = (int16_t)value;
    for (size_t i = 0; i < count; i++) memcpy(out + 2 * i, &v, sizeof v);
  }
  return out + count * itemsize;
}

static int32_t pad(const tvmd_cmsis_pad_params_t* p, void* const* buffers, void* resource_handle, uint32_t kind) {
  if (p == NULL || p->kind != kind || buffers == NULL || (p->itemsize != 1 && p->itemsize != 2)) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  const uint8_t* in = (const uint8_t*)buffers[0];
  uint8_t* out = (uint8_t*)buffers[p->num_inputs];
  if (in == NULL || out == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int32_t status = tvmd_cmsis_enter(resource_handle, kind, 0);
  if (status != TVMD_OK) return status;

  const size_t size = (size_t)p->itemsize;
  const int32_t value = p->pad_value;
  const size_t c = (size_t)p->in_shape[3];
  const size_t out_c = (size_t)(p->before[3] + p->in_shape[3] + p->after[3]);
  const size_t out_w = (size_t)(p->before[2] + p->in_shape[2] + p->after[2]);
  const size_t out_h = (size_t)(p->before[1] + p->in_shape[1] + p->after[1]);
  const size_t out_row = out_w * out_c, out_image = out_h * out_row;

  out = fill(out, (size_t)p->before[0] * out_image, value, size);
  for (int32_t n = 0; n < p->in_shape[0]; n++) {
    out = fill(out, (size_t)p->before[1] * out_row, value, size);
    for (int32_t h = 0; h < p->in_shape[1]; h++) {
      out = fill(out, (size_t)p->before[2] * out_c, value, size);
      for (int32_t w = 0; w < p->in_shape[2]; w++) {
        out = fill(out, (size_t)p->before[3], value, size);
        memcpy(out, in, c * size);
        out = fill(out + c * size, (size_t)p->after[3], value, size);
        in += c * size;
      }
      out = fill(out, (size_t)p->after[2] * out_c, value, size);
    }
    out = fill(out, (size_t)p->after[1] * out_row, value, size);
  }
  fill(out, (size_t)p->after[0] * out_image, value, size);
  return TVMD_OK;
}

int32_t tvmd_cmsis_pad(const void* params, void* const* buffers, void* resource_handle) {
  return pad((const tvmd_cmsis_pad_params_t*)params, buffers, resource_handle, TVMD_CMSIS_KIND_PAD);
}

int32_t tvmd_cmsis_padv2(const void* params, void* const* buffers, void* resource_handle) {
  return pad((const tvmd_cmsis_pad_params_t*)params, buffers, resource_handle, TVMD_CMSIS_KIND_PADV2);
}
