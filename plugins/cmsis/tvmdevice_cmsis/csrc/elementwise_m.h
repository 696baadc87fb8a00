/*
 * The M-profile runs of ADD and MUL, shared by the int8 (elementwise.c) and
 * int16 (elementwise_s16.c) kernels: one run of the broadcast walk
 * (TVMD_CMSIS_BROADCAST_ROWS, broadcast.h) at a time, each input advancing
 * along it (step 1) or broadcast (step 0: scaled once per run, not once per
 * element).  The element width (1: int8, 2: int16) is a constant at each
 * kernel's rows, so every kernel gets its own loops; the arithmetic is the
 * reference's for both widths (the left shift, 20 or 15, and the clamps come
 * in the params), the int32 intermediate steps wrapping as the reference's:
 *  - Helium (MVE): four elements per step, loaded widened to int32 lanes
 *    (VLDRB.S32 / VLDRH.S32), requantized by tvmd_cmsis_requantize_mve
 *    (proven equal in mprofile.h), the last step tail-predicated;
 *  - DSP: the requantizations by tvmd_cmsis_requantize_1 (one SMLAL); MUL
 *    int8 four elements per word pair (SXTAB16 adds the offsets to two values
 *    at once, SMLABB / SMLATT multiply them), MUL int16 two per word pair
 *    (SMLABB / SMLATT) when its offsets are 0, as TFLM requires for int16.
 * Included only by those two files, on M-profile builds.
 */
#ifndef TVMD_CMSIS_ELEMENTWISE_M_H_
#define TVMD_CMSIS_ELEMENTWISE_M_H_

#include "mprofile.h"

/* Element i of width `bytes` at base. */
TVMD_CMSIS_INLINE int32_t tvmd_ew_at(const void* base, int32_t i, int bytes) {
  return bytes == 1 ? ((const int8_t*)base)[i] : ((const int16_t*)base)[i];
}

#if TVMD_CMSIS_MVE
/* Four elements of width `bytes` from base + i, widened to int32; lanes
 * past the predicate read as zero. */
TVMD_CMSIS_INLINE int32x4_t tvmd_ew_load_mve(const void* base, int32_t i, int bytes, mve_pred16_t t) {
  return bytes == 1 ? vldrbq_z_s32((const int8_t*)base + i, t) : vldrhq_z_s32((const int16_t*)base + i, t);
}

/* One input of ADD on four lanes: offset, the left shift, its own rescale. */
TVMD_CMSIS_INLINE int32x4_t tvmd_ew_add_scale_mve(int32x4_t x, int32_t offset, int32_t left_shift, int32x4_t m,
                                                   int32x4_t shift) {
  return tvmd_cmsis_requantize_mve(vshlq_r_s32(vaddq_n_s32(x, offset), left_shift), m, shift);
}

/* The output of four lanes: rescaled, offset, clamped, narrowed to the
 * width and stored under t. */
TVMD_CMSIS_INLINE void tvmd_ew_store_mve(void* out, int32_t i, int bytes, int32x4_t raw, int32x4_t m,
                                         int32x4_t shift, const tvmd_cmsis_elementwise_params_t* p,
                                         mve_pred16_t t) {
  int32x4_t v = vaddq_n_s32(tvmd_cmsis_requantize_mve(raw, m, shift), p->output_offset);
  v = vminq_s32(vmaxq_s32(v, vdupq_n_s32(p->act_min)), vdupq_n_s32(p->act_max));
  if (bytes == 1) {
    vstrbq_p_s32((int8_t*)out + i, v, t);
  } else {
    vstrhq_p_s32((int16_t*)out + i, v, t);
  }
}

/* A run of ADD; a_runs / b_runs are constants at each call (1: the input
 * advances, 0: its one value is broadcast), so each case is its own loop. */
TVMD_CMSIS_INLINE void tvmd_ew_add_run_mve(const void* a, const void* b, void* out, int32_t n,
                                           const tvmd_cmsis_elementwise_params_t* p, int bytes, int a_runs,
                                           int b_runs) {
  const int32x4_t m1 = vdupq_n_s32(p->input1_multiplier), sh1 = vdupq_n_s32(p->input1_shift);
  const int32x4_t m2 = vdupq_n_s32(p->input2_multiplier), sh2 = vdupq_n_s32(p->input2_shift);
  const int32x4_t mo = vdupq_n_s32(p->output_multiplier), sho = vdupq_n_s32(p->output_shift);
  const int32_t o1 = p->input1_offset, o2 = p->input2_offset, left = p->left_shift;
  const int32x4_t ca = tvmd_ew_add_scale_mve(vdupq_n_s32(tvmd_ew_at(a, 0, bytes)), o1, left, m1, sh1);
  const int32x4_t cb = tvmd_ew_add_scale_mve(vdupq_n_s32(tvmd_ew_at(b, 0, bytes)), o2, left, m2, sh2);
  for (int32_t i = 0; i < n; i += 4) {
    const mve_pred16_t t = vctp32q((uint32_t)(n - i));
    const int32x4_t xa = a_runs ? tvmd_ew_add_scale_mve(tvmd_ew_load_mve(a, i, bytes, t), o1, left, m1, sh1) : ca;
    const int32x4_t xb = b_runs ? tvmd_ew_add_scale_mve(tvmd_ew_load_mve(b, i, bytes, t), o2, left, m2, sh2) : cb;
    tvmd_ew_store_mve(out, i, bytes, vaddq_s32(xa, xb), mo, sho, p, t); /* the sum wraps, as the reference's */
  }
}

/* A run of MUL (a_runs / b_runs as for ADD); the product wraps modulo 2^32
 * as the reference's (int16 values with offsets can exceed int32). */
TVMD_CMSIS_INLINE void tvmd_ew_mul_run_mve(const void* a, const void* b, void* out, int32_t n,
                                           const tvmd_cmsis_elementwise_params_t* p, int bytes, int a_runs,
                                           int b_runs) {
  const int32x4_t mo = vdupq_n_s32(p->output_multiplier), sho = vdupq_n_s32(p->output_shift);
  const int32_t o1 = p->input1_offset, o2 = p->input2_offset;
  const int32x4_t ca = vdupq_n_s32(tvmd_ew_at(a, 0, bytes) + o1), cb = vdupq_n_s32(tvmd_ew_at(b, 0, bytes) + o2);
  for (int32_t i = 0; i < n; i += 4) {
    const mve_pred16_t t = vctp32q((uint32_t)(n - i));
    const int32x4_t xa = a_runs ? vaddq_n_s32(tvmd_ew_load_mve(a, i, bytes, t), o1) : ca;
    const int32x4_t xb = b_runs ? vaddq_n_s32(tvmd_ew_load_mve(b, i, bytes, t), o2) : cb;
    tvmd_ew_store_mve(out, i, bytes, vmulq_s32(xa, xb), mo, sho, p, t);
  }
}

/* add_row / mul_row for elements of `bytes`: the runs specialized on the two
 * steps, for TVMD_CMSIS_BROADCAST_ROWS. */
#define TVMD_CMSIS_EW_ROW(name, run, bytes)                                                               \
  static void name(const void* a, int32_t sa, const void* b, int32_t sb, void* out, int32_t n,           \
                   const tvmd_cmsis_elementwise_params_t* p) {                                           \
    if (sa == 1 && sb == 1) run(a, b, out, n, p, bytes, 1, 1);                                           \
    else if (sa == 1 && sb == 0) run(a, b, out, n, p, bytes, 1, 0);                                      \
    else if (sa == 0 && sb == 1) run(a, b, out, n, p, bytes, 0, 1);                                      \
    else run(a, b, out, n, p, bytes, 0, 0);                                                              \
  }
#define TVMD_CMSIS_EW_ROWS(bytes)                    \
  TVMD_CMSIS_EW_ROW(add_row, tvmd_ew_add_run_mve, bytes) \
  TVMD_CMSIS_EW_ROW(mul_row, tvmd_ew_mul_run_mve, bytes)

#elif TVMD_CMSIS_DSP

/* One input of ADD: offset, the left shift (dropping the bits shifted out), its own rescale. */
TVMD_CMSIS_INLINE int32_t tvmd_ew_add_scale_1(int32_t x, int32_t offset, int32_t left_shift, int32_t m,
                                              int32_t shift) {
  return tvmd_cmsis_requantize_1((int32_t)(((uint32_t)x + (uint32_t)offset) << left_shift), m, shift);
}

/* The output of one element: rescaled, offset, clamped (to the width's range by the params). */
TVMD_CMSIS_INLINE int32_t tvmd_ew_out_1(int32_t raw, const tvmd_cmsis_elementwise_params_t* p) {
  const int32_t v = tvmd_cmsis_requantize_1(raw, p->output_multiplier, p->output_shift) + p->output_offset;
  return v < p->act_min ? p->act_min : (v > p->act_max ? p->act_max : v);
}

TVMD_CMSIS_INLINE void tvmd_ew_put(void* out, int32_t i, int bytes, int32_t v) {
  if (bytes == 1) {
    ((int8_t*)out)[i] = (int8_t)v;
  } else {
    ((int16_t*)out)[i] = (int16_t)v;
  }
}

/* A run of ADD (steps 0 or 1): an input broadcast along it is scaled once. */
TVMD_CMSIS_INLINE void tvmd_ew_add_run_dsp(const void* a, int32_t sa, const void* b, int32_t sb, void* out,
                                           int32_t n, const tvmd_cmsis_elementwise_params_t* p, int bytes) {
  const int32_t o1 = p->input1_offset, m1 = p->input1_multiplier, sh1 = p->input1_shift;
  const int32_t o2 = p->input2_offset, m2 = p->input2_multiplier, sh2 = p->input2_shift, left = p->left_shift;
  const int32_t ca = tvmd_ew_add_scale_1(tvmd_ew_at(a, 0, bytes), o1, left, m1, sh1);
  const int32_t cb = tvmd_ew_add_scale_1(tvmd_ew_at(b, 0, bytes), o2, left, m2, sh2);
  for (int32_t i = 0; i < n; i++) {
    const int32_t xa = sa ? tvmd_ew_add_scale_1(tvmd_ew_at(a, i, bytes), o1, left, m1, sh1) : ca;
    const int32_t xb = sb ? tvmd_ew_add_scale_1(tvmd_ew_at(b, i, bytes), o2, left, m2, sh2) : cb;
    tvmd_ew_put(out, i, bytes, tvmd_ew_out_1(tvmd_cmsis_wrap_add(xa, xb), p));
  }
}

/* A run of MUL: the packed forms above when both inputs advance, then one
 * element at a time (the product wrapping modulo 2^32 as the reference's). */
TVMD_CMSIS_INLINE void tvmd_ew_mul_run_dsp(const void* a, int32_t sa, const void* b, int32_t sb, void* out,
                                           int32_t n, const tvmd_cmsis_elementwise_params_t* p, int bytes) {
  const int32_t o1 = p->input1_offset, o2 = p->input2_offset;
  int32_t i = 0;
  if (sa == 1 && sb == 1 && bytes == 1) {
    /* |x + offset| <= 255: exact in the int16 lanes of SXTAB16. */
    const int8_t *a8 = (const int8_t*)a, *b8 = (const int8_t*)b;
    int8_t* out8 = (int8_t*)out;
    const uint32_t o1x2 = ((uint32_t)(uint16_t)o1 << 16) | (uint16_t)o1; /* o1 in both halves */
    const uint32_t o2x2 = ((uint32_t)(uint16_t)o2 << 16) | (uint16_t)o2;
    for (; i + 4 <= n; i += 4) {
      const uint32_t wa = tvmd_cmsis_read_s8x4(a8 + i), wb = tvmd_cmsis_read_s8x4(b8 + i);
      const uint32_t a02 = __sxtab16(o1x2, wa), a13 = __sxtab16(o1x2, wa >> 8);
      const uint32_t b02 = __sxtab16(o2x2, wb), b13 = __sxtab16(o2x2, wb >> 8);
      out8[i] = (int8_t)tvmd_ew_out_1(__smlabb(a02, b02, 0), p);
      out8[i + 1] = (int8_t)tvmd_ew_out_1(__smlabb(a13, b13, 0), p);
      out8[i + 2] = (int8_t)tvmd_ew_out_1(__smlatt(a02, b02, 0), p);
      out8[i + 3] = (int8_t)tvmd_ew_out_1(__smlatt(a13, b13, 0), p);
    }
  } else if (sa == 1 && sb == 1 && o1 == 0 && o2 == 0) {
    /* int16 without offsets: a product of two int16 is exact in int32. */
    const int16_t *a16 = (const int16_t*)a, *b16 = (const int16_t*)b;
    int16_t* out16 = (int16_t*)out;
    for (; i + 2 <= n; i += 2) {
      const uint32_t wa = tvmd_cmsis_read_s16x2(a16 + i), wb = tvmd_cmsis_read_s16x2(b16 + i);
      const uint32_t lo = (uint16_t)tvmd_ew_out_1(__smlabb(wa, wb, 0), p);
      const uint32_t hi = (uint16_t)tvmd_ew_out_1(__smlatt(wa, wb, 0), p);
      const uint32_t pair = lo | (hi << 16);
      memcpy(out16 + i, &pair, sizeof pair);
    }
  }
  const uint32_t ca = (uint32_t)tvmd_ew_at(a, 0, bytes) + (uint32_t)o1;
  const uint32_t cb = (uint32_t)tvmd_ew_at(b, 0, bytes) + (uint32_t)o2;
  for (; i < n; i++) {
    const uint32_t xa = sa ? (uint32_t)tvmd_ew_at(a, i, bytes) + (uint32_t)o1 : ca;
    const uint32_t xb = sb ? (uint32_t)tvmd_ew_at(b, i, bytes) + (uint32_t)o2 : cb;
    tvmd_ew_put(out, i, bytes, tvmd_ew_out_1((int32_t)(xa * xb), p));
  }
}

/* add_row / mul_row for elements of `bytes`, for TVMD_CMSIS_BROADCAST_ROWS. */
#define TVMD_CMSIS_EW_ROWS(bytes)                                                                         \
  static void add_row(const void* a, int32_t sa, const void* b, int32_t sb, void* out, int32_t n,        \
                      const tvmd_cmsis_elementwise_params_t* p) {                                        \
    tvmd_ew_add_run_dsp(a, sa, b, sb, out, n, p, bytes);                                                 \
  }                                                                                                      \
  static void mul_row(const void* a, int32_t sa, const void* b, int32_t sb, void* out, int32_t n,        \
                      const tvmd_cmsis_elementwise_params_t* p) {                                        \
    tvmd_ew_mul_run_dsp(a, sa, b, sb, out, n, p, bytes);                                                 \
  }
#endif

#endif /* TVMD_CMSIS_ELEMENTWISE_M_H_ */
