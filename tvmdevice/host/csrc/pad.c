/*
 * PAD, int8: TFLM's reference_ops::Pad for int8 with a constant fill.  The
 * input's values are moved, not rescaled (input and output share their
 * quantization), and the padding holds the output zero point.  Shapes are
 * right-aligned to TVMD_C_PAD_DIMS dimensions; the innermost dimension is
 * written as a row: leading fill, the input row, trailing fill.
 */
#include <string.h>

#include "internal.h"

int32_t tvmd_c_pad_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_pad_params_t* p = (const tvmd_c_pad_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* out = (int8_t*)buffers[2]; /* buffers[1] is the paddings tensor */
  const int last = TVMD_C_PAD_DIMS - 1;
  const int8_t fill = (int8_t)p->pad_value;
  const size_t out_row = (size_t)p->out_shape[last], in_row = (size_t)p->in_shape[last];
  const size_t before = (size_t)p->before[last];
  size_t rows = 1, in_strides[TVMD_C_PAD_DIMS];
  int32_t index[TVMD_C_PAD_DIMS] = {0};
  (void)resource_handle;
  in_strides[last] = 1;
  for (int d = last - 1; d >= 0; --d) {
    in_strides[d] = in_strides[d + 1] * (size_t)p->in_shape[d + 1];
    rows *= (size_t)p->out_shape[d];
  }
  for (size_t r = 0; r < rows; ++r, out += out_row) {
    /* Is this output row inside the input, and where does it start there? */
    size_t offset = 0;
    int inside = 1;
    for (int d = 0; d < last; ++d) {
      const int32_t i = index[d] - p->before[d];
      if (i < 0 || i >= p->in_shape[d]) inside = 0;
      else offset += (size_t)i * in_strides[d];
    }
    if (inside) {
      memset(out, fill, before);
      memcpy(out + before, input + offset, in_row);
      memset(out + before + in_row, fill, out_row - before - in_row);
    } else {
      memset(out, fill, out_row);
    }
    for (int d = last - 1; d >= 0; --d) {
      if (++index[d] < p->out_shape[d]) break;
      index[d] = 0;
    }
  }
  return TVMD_OK;
}
