/*
 * Shape and data-movement kernels: values are moved byte for byte, never
 * rescaled, so each kernel serves int8 and int16 (params->itemsize bytes per
 * element).  Shapes, offsets and strides were validated in Python: every
 * index a kernel forms lies inside its buffer.
 *
 *   strided_copy  TRANSPOSE, SLICE, STRIDED_SLICE, BROADCAST_TO (TFLM's
 *                 reference Transpose, Slice, StridedSlice, BroadcastTo)
 *   split         SPLIT, SPLIT_V, UNPACK (TFLM's SplitImpl / UnpackImpl)
 *   join          PACK, int16 CONCATENATION (TFLM's PackImpl / Concatenation)
 *   pad_any       PADV2 and int16 PAD (TFLM's reference Pad)
 */
#include <string.h>

#include "internal.h"

static void tvmd_c_copy_element(uint8_t* dst, const uint8_t* src, int32_t itemsize) {
  if (itemsize == 1) {
    *dst = *src;
  } else {
    memcpy(dst, src, (size_t)itemsize);
  }
}

int32_t tvmd_c_strided_copy(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_strided_copy_params_t* p = (const tvmd_c_strided_copy_params_t*)params;
  const uint8_t* input = (const uint8_t*)buffers[0];
  uint8_t* out = (uint8_t*)buffers[p->num_inputs];
  const int last = TVMD_C_COPY_DIMS - 1;
  const int32_t n = p->out_shape[last], step = p->in_strides[last], size = p->itemsize;
  int32_t index[TVMD_C_COPY_DIMS] = {0};
  size_t rows = 1;
  (void)resource_handle;
  for (int d = 0; d < last; ++d) rows *= (size_t)p->out_shape[d];
  for (size_t r = 0; r < rows; ++r) {
    /* Signed element offset of this output row's first element in the input. */
    ptrdiff_t at = (ptrdiff_t)p->offset;
    for (int d = 0; d < last; ++d) at += (ptrdiff_t)index[d] * p->in_strides[d];
    if (step == 1) {
      memcpy(out, input + at * size, (size_t)n * (size_t)size);
      out += (size_t)n * (size_t)size;
    } else {
      for (int32_t k = 0; k < n; ++k, out += size, at += step) {
        tvmd_c_copy_element(out, input + at * size, size);
      }
    }
    for (int d = last - 1; d >= 0; --d) {
      if (++index[d] < p->out_shape[d]) break;
      index[d] = 0;
    }
  }
  return TVMD_OK;
}

int32_t tvmd_c_split(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_split_params_t* p = (const tvmd_c_split_params_t*)params;
  const uint8_t* input = (const uint8_t*)buffers[p->input_index];
  (void)resource_handle;
  for (int32_t k = 0; k < p->outer_size; ++k) {
    for (int32_t i = 0; i < p->outputs_count; ++i) {
      const size_t n = (size_t)p->copy_bytes[i];
      memcpy((uint8_t*)buffers[p->num_inputs + i] + (size_t)k * n, input, n);
      input += n;
    }
  }
  return TVMD_OK;
}

int32_t tvmd_c_join(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_join_params_t* p = (const tvmd_c_join_params_t*)params;
  uint8_t* out = (uint8_t*)buffers[p->inputs_count];
  (void)resource_handle;
  for (int32_t k = 0; k < p->outer_size; ++k) {
    for (int32_t i = 0; i < p->inputs_count; ++i) {
      const size_t n = (size_t)p->copy_bytes[i];
      memcpy(out, (const uint8_t*)buffers[i] + (size_t)k * n, n);
      out += n;
    }
  }
  return TVMD_OK;
}

/* n elements of the fill value. */
static void tvmd_c_fill(uint8_t* out, size_t n, int32_t value, int32_t itemsize) {
  if (itemsize == 1) {
    memset(out, (int)(int8_t)value, n);
  } else {
    const int16_t v = (int16_t)value;
    for (size_t k = 0; k < n; ++k) memcpy(out + 2 * k, &v, 2);
  }
}

int32_t tvmd_c_pad_any(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_pad_any_params_t* p = (const tvmd_c_pad_any_params_t*)params;
  const uint8_t* input = (const uint8_t*)buffers[0];
  uint8_t* out = (uint8_t*)buffers[p->num_inputs];
  const int last = TVMD_C_SHAPE_PAD_DIMS - 1;
  const size_t size = (size_t)p->itemsize;
  const size_t out_row = (size_t)p->out_shape[last], in_row = (size_t)p->in_shape[last];
  const size_t before = (size_t)p->before[last];
  size_t rows = 1, in_strides[TVMD_C_SHAPE_PAD_DIMS];
  int32_t index[TVMD_C_SHAPE_PAD_DIMS] = {0};
  (void)resource_handle;
  in_strides[last] = 1;
  for (int d = last - 1; d >= 0; --d) {
    in_strides[d] = in_strides[d + 1] * (size_t)p->in_shape[d + 1];
    rows *= (size_t)p->out_shape[d];
  }
  for (size_t r = 0; r < rows; ++r, out += out_row * size) {
    size_t offset = 0;
    int inside = 1;
    for (int d = 0; d < last; ++d) {
      const int32_t i = index[d] - p->before[d];
      if (i < 0 || i >= p->in_shape[d]) inside = 0;
      else offset += (size_t)i * in_strides[d];
    }
    if (inside) {
      tvmd_c_fill(out, before, p->pad_value, p->itemsize);
      memcpy(out + before * size, input + offset * size, in_row * size);
      tvmd_c_fill(out + (before + in_row) * size, out_row - before - in_row, p->pad_value, p->itemsize);
    } else {
      tvmd_c_fill(out, out_row, p->pad_value, p->itemsize);
    }
    for (int d = last - 1; d >= 0; --d) {
      if (++index[d] < p->out_shape[d]) break;
      index[d] = 0;
    }
  }
  return TVMD_OK;
}
