/*
 * Shared by the host device's C reference kernels (tvmdevice/host/csrc/):
 * the generated params structs and prototypes, TFLM's requantization and
 * fixed-point math (tvmdevice/quant.h, tvmdevice/fixedpoint.h, shared with
 * every device's C) and the few integer helpers C99 lacks.
 *
 * Every kernel here is portable C99: no allocation, no I/O, no float except
 * where TFLM's reference itself uses float (QUANTIZE from float, DEQUANTIZE).
 * The same files build the host extension and firmware.  Shapes and sizes
 * were validated in Python before a call reaches C.
 */
#ifndef TVMD_C_INTERNAL_H_
#define TVMD_C_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include "tvmd_c_kernels.h"
#include "tvmdevice/c_device_api.h"
#include "tvmdevice/fixedpoint.h"
#include "tvmdevice/quant.h"

static inline int8_t tvmd_c_clamp_s8(int32_t x, int32_t lo, int32_t hi) {
  return (int8_t)tvmd_clamp_i32(x, lo, hi);
}

static inline int32_t tvmd_c_min(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int32_t tvmd_c_max(int32_t a, int32_t b) { return a > b ? a : b; }

/* One step of the ADD/SUB/MUL broadcast walk over the dimensions before the last
 * (right-aligned to TVMD_C_MAX_DIMS): advance the odometer index and the two
 * inputs' element offsets to the next output row. */
static inline void tvmd_c_broadcast_next_row(const tvmd_c_elementwise_params_t* p, int32_t* index, size_t* o1,
                                             size_t* o2) {
  for (int d = TVMD_C_MAX_DIMS - 2; d >= 0; --d) {
    *o1 += (size_t)p->in1_strides[d];
    *o2 += (size_t)p->in2_strides[d];
    if (++index[d] < p->out_shape[d]) return;
    /* Unsigned wrap-around brings the offsets back exactly. */
    *o1 -= (size_t)p->in1_strides[d] * (size_t)p->out_shape[d];
    *o2 -= (size_t)p->in2_strides[d] * (size_t)p->out_shape[d];
    index[d] = 0;
  }
}

/* SOFTMAX's gemmlowp path (softmax.c) for int8 input and an int8 (out_bits 8) or
 * int16 (out_bits 16) output. */
int32_t tvmd_c_softmax_gemmlowp(const tvmd_c_softmax_params_t* p, const int8_t* input, void* output, int out_bits);

#endif /* TVMD_C_INTERNAL_H_ */
