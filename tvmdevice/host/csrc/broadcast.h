/*
 * The broadcast walk of the int8 binary kernels MAXIMUM, MINIMUM,
 * SQUARED_DIFFERENCE and PRELU: the output is written in order, each input's
 * element found from its strides (0 along a broadcast dimension), shapes
 * right-aligned to TVMD_C_MAX_DIMS.  The innermost dimension is a row walked
 * with the inputs' strides; the outer ones advance like an odometer.
 */
#ifndef TVMD_C_BROADCAST_H_
#define TVMD_C_BROADCAST_H_

#include "internal.h"

typedef int8_t (*tvmd_c_binary_fn)(const void* params, int8_t a, int8_t b);

static inline void tvmd_c_broadcast_s8(int32_t size, const int32_t* out_shape, const int32_t* in1_strides,
                                       const int32_t* in2_strides, void* const* buffers, const void* params,
                                       tvmd_c_binary_fn one) {
  const int8_t* in1 = (const int8_t*)buffers[0];
  const int8_t* in2 = (const int8_t*)buffers[1];
  int8_t* out = (int8_t*)buffers[2];
  const int last = TVMD_C_MAX_DIMS - 1;
  const int32_t row = out_shape[last];
  const size_t s1 = (size_t)in1_strides[last], s2 = (size_t)in2_strides[last];
  int32_t index[TVMD_C_MAX_DIMS] = {0};
  size_t o1 = 0, o2 = 0, o = 0;
  while (o < (size_t)size) {
    for (int32_t j = 0; j < row; ++j) {
      out[o + (size_t)j] = one(params, in1[o1 + (size_t)j * s1], in2[o2 + (size_t)j * s2]);
    }
    o += (size_t)row;
    for (int d = last - 1; d >= 0; --d) {
      o1 += (size_t)in1_strides[d];
      o2 += (size_t)in2_strides[d];
      if (++index[d] < out_shape[d]) break;
      /* Unsigned wrap-around brings the offsets back exactly. */
      o1 -= (size_t)in1_strides[d] * (size_t)out_shape[d];
      o2 -= (size_t)in2_strides[d] * (size_t)out_shape[d];
      index[d] = 0;
    }
  }
}

#endif /* TVMD_C_BROADCAST_H_ */
