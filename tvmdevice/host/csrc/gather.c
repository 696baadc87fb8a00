/*
 * GATHER, int8 data, int32 positions: TFLM's gather.cc.  For each batch and
 * outer block, the output holds inner_size elements per position, read at
 * that position along the axis.  Positions are run-time data: one outside
 * [0, axis_size) fails the call before anything is read there, as TFLM's
 * kernel returns an error.
 */
#include <string.h>

#include "internal.h"

int32_t tvmd_c_gather_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_gather_params_t* p = (const tvmd_c_gather_params_t*)params;
  const int8_t* input = (const int8_t*)buffers[0];
  const int32_t* coords = (const int32_t*)buffers[1];
  int8_t* out = (int8_t*)buffers[2];
  const size_t inner = (size_t)p->inner_size;
  (void)resource_handle;
  for (int32_t b = 0; b < p->batch_size; ++b) {
    for (int32_t o = 0; o < p->outer_size; ++o) {
      const size_t block = (size_t)b * (size_t)p->outer_size + (size_t)o;
      for (int32_t k = 0; k < p->coord_size; ++k) {
        const int32_t at = coords[(size_t)b * (size_t)p->coord_size + (size_t)k];
        if (at < 0 || at >= p->axis_size) return TVMD_ERR_INVALID_ARGUMENT;
        memcpy(out + (block * (size_t)p->coord_size + (size_t)k) * inner,
               input + (block * (size_t)p->axis_size + (size_t)at) * inner, inner);
      }
    }
  }
  return TVMD_OK;
}
