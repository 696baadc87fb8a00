/*
 * SUM, REDUCE_MAX, ARG_MAX and ARG_MIN, int8.
 *
 * SUM is MEAN's kernel (TFLM's QuantizedMeanOrSum) with a multiplier that
 * has no 1 / count folded in.  REDUCE_MAX is TFLM's ReduceGeneric with the
 * raw int8 maximum, shapes right-aligned to TVMD_C_MEAN_DIMS like MEAN's.
 * ARG_MAX / ARG_MIN give the index of the first largest (smallest) value
 * along the axis, the input read as [outer, axis, inner].
 */
#include "internal.h"

int32_t tvmd_c_sum_s8(const void* params, void* const* buffers, void* resource_handle) {
  return tvmd_c_mean_s8(params, buffers, resource_handle);
}

int32_t tvmd_c_reduce_max_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_reduce_max_params_t* p = (const tvmd_c_reduce_max_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* out = (int8_t*)buffers[2]; /* buffers[1] is the axis tensor */
  enum { D = TVMD_C_MEAN_DIMS };
  size_t strides[D];
  int32_t kept[D], reduced[D];
  size_t outputs = 1, count = 1;
  (void)resource_handle;
  strides[D - 1] = 1;
  for (int d = D - 2; d >= 0; --d) strides[d] = strides[d + 1] * (size_t)p->shape[d + 1];
  for (int d = 0; d < D; ++d) {
    kept[d] = p->reduced[d] ? 1 : p->shape[d];
    reduced[d] = p->reduced[d] ? p->shape[d] : 1;
    outputs *= (size_t)kept[d];
    count *= (size_t)reduced[d];
  }
  int32_t o[D] = {0};
  for (size_t n = 0; n < outputs; ++n) {
    size_t base = 0;
    for (int d = 0; d < D; ++d) base += (size_t)o[d] * strides[d];
    int8_t best = INT8_MIN;
    int32_t r[D] = {0};
    for (size_t k = 0; k < count; ++k) {
      size_t at = base;
      for (int d = 0; d < D; ++d) at += (size_t)r[d] * strides[d];
      if (input[at] > best) best = input[at];
      for (int d = D - 1; d >= 0; --d) {
        if (++r[d] < reduced[d]) break;
        r[d] = 0;
      }
    }
    out[n] = best;
    for (int d = D - 1; d >= 0; --d) {
      if (++o[d] < kept[d]) break;
      o[d] = 0;
    }
  }
  return TVMD_OK;
}

static void arg_min_max(const tvmd_c_arg_min_max_params_t* p, void* const* buffers, int is_max) {
  const int8_t* input = (const int8_t*)buffers[0];
  int32_t* out = (int32_t*)buffers[2]; /* buffers[1] is the axis tensor */
  const size_t inner = (size_t)p->inner_size, axis = (size_t)p->axis_size;
  for (size_t outer = 0; outer < (size_t)p->outer_size; ++outer) {
    const int8_t* row = input + outer * axis * inner;
    for (size_t i = 0; i < inner; ++i) {
      int8_t best = row[i];
      int32_t best_index = 0;
      for (size_t k = 1; k < axis; ++k) {
        const int8_t v = row[k * inner + i];
        if (is_max ? v > best : v < best) {
          best = v;
          best_index = (int32_t)k;
        }
      }
      out[outer * inner + i] = best_index;
    }
  }
}

int32_t tvmd_c_arg_max_s8(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  arg_min_max((const tvmd_c_arg_min_max_params_t*)params, buffers, 1);
  return TVMD_OK;
}

int32_t tvmd_c_arg_min_s8(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  arg_min_max((const tvmd_c_arg_min_max_params_t*)params, buffers, 0);
  return TVMD_OK;
}
