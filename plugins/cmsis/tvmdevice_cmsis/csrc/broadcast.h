/*
 * The ADD/MUL broadcast walk shared by the int8 and int16 elementwise kernels:
 * the output in row-major order, each input read through its element strides
 * (0 along a broadcast dimension, computed and checked at prepare time);
 * equal shapes and scalar operands arrive collapsed to one dimension, so they
 * run as a single flat loop.
 */
#ifndef TVMD_CMSIS_BROADCAST_H_
#define TVMD_CMSIS_BROADCAST_H_

#include "internal.h"

/* Walk the output of p (a tvmd_cmsis_elementwise_params_t*) from in1 and in2
 * into out, one run of the innermost dimension at a time: STEP(fn) handles
 * the run out[base, base + inner) from in1 + o1 and in2 + o2 (element steps
 * s1 and s2: 1 along the innermost dimension, 0 where broadcast), then an
 * odometer advances the offsets over the outer dimensions. */
#define TVMD_CMSIS_BROADCAST_WALK(STEP, fn)                                                      \
  do {                                                                                           \
    const int32_t last = p->ndim - 1;                                                            \
    const int32_t inner = p->out_shape[last];                                                    \
    const int32_t s1 = p->in1_strides[last], s2 = p->in2_strides[last];                          \
    int32_t index[TVMD_CMSIS_MAX_DIMS] = {0};                                                    \
    size_t o1 = 0, o2 = 0;                                                                       \
    for (size_t base = 0; base < (size_t)p->size; base += (size_t)inner) {                       \
      STEP(fn);                                                                                  \
      for (int32_t d = last - 1; d >= 0; d--) {                                                  \
        o1 += (size_t)p->in1_strides[d];                                                         \
        o2 += (size_t)p->in2_strides[d];                                                         \
        if (++index[d] < p->out_shape[d]) break;                                                 \
        o1 -= (size_t)p->in1_strides[d] * (size_t)p->out_shape[d];                               \
        o2 -= (size_t)p->in2_strides[d] * (size_t)p->out_shape[d];                               \
        index[d] = 0;                                                                            \
      }                                                                                          \
    }                                                                                            \
  } while (0)

/* One run element by element: out[k] = op(in1[...], in2[...], p), `op`
 * inlined into each caller (the int8 and int16 ADD and MUL kernels). */
#define TVMD_CMSIS_BROADCAST_ELEMENTS(op)                                                        \
  for (int32_t i = 0; i < inner; i++) {                                                          \
    out[base + (size_t)i] = op(in1[o1 + (size_t)i * s1], in2[o2 + (size_t)i * s2], p);          \
  }

/* One run through row(a, a_step, b, b_step, out, n, p), which writes
 * out[i] = op(a[i * a_step], b[i * b_step]) for i < n, where a step is 1 (the
 * input runs along the innermost dimension) or 0 (it is broadcast there); the
 * M-profile kernels vectorize the run. */
#define TVMD_CMSIS_BROADCAST_RUN(row) row(in1 + o1, s1, in2 + o2, s2, out + base, inner, p)

#define TVMD_CMSIS_BROADCAST_LOOP(op) TVMD_CMSIS_BROADCAST_WALK(TVMD_CMSIS_BROADCAST_ELEMENTS, op)
#define TVMD_CMSIS_BROADCAST_ROWS(row) TVMD_CMSIS_BROADCAST_WALK(TVMD_CMSIS_BROADCAST_RUN, row)

#endif /* TVMD_CMSIS_BROADCAST_H_ */
