/*
 * MAXIMUM and MINIMUM, int8: TFLM's MaximumMinimumBroadcastSlow on the raw
 * values (no requantization), with broadcasting.
 */
#include "broadcast.h"

static int8_t maximum_one(const void* p, int8_t a, int8_t b) {
  (void)p;
  return a > b ? a : b;
}

static int8_t minimum_one(const void* p, int8_t a, int8_t b) {
  (void)p;
  return a < b ? a : b;
}

int32_t tvmd_c_maximum_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_minmax_params_t* p = (const tvmd_c_minmax_params_t*)params;
  (void)resource_handle;
  tvmd_c_broadcast_s8(p->size, p->out_shape, p->in1_strides, p->in2_strides, buffers, p, maximum_one);
  return TVMD_OK;
}

int32_t tvmd_c_minimum_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_minmax_params_t* p = (const tvmd_c_minmax_params_t*)params;
  (void)resource_handle;
  tvmd_c_broadcast_s8(p->size, p->out_shape, p->in1_strides, p->in2_strides, buffers, p, minimum_one);
  return TVMD_OK;
}
