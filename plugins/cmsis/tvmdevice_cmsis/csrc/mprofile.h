/*
 * What the M-profile kernels (conv_m.c, depthwise_conv_m.c,
 * fully_connected_m.c) share: the instruction-set path chosen at compile
 * time, and requantization written for it.
 *
 * Paths, chosen by the compiler's own feature macros (ACLE):
 *   TVMD_CMSIS_MVE  Helium (M-profile Vector Extension, integer): Cortex-M55,
 *                   M85; arm_mve.h intrinsics.
 *   TVMD_CMSIS_DSP  the DSP extension: Cortex-M4, M7, M33 (and M55/M85, where
 *                   MVE is preferred); arm_acle.h (__smlad, __sxtb16, ...).
 *   neither         plain C99: Cortex-M0/M3, and the host (the same code the
 *                   Python executor runs, so every host test checks it).
 * Defining TVMD_CMSIS_PLAIN forces the plain path on any CPU.
 *
 * Every path computes the same integers: the dot products are exact (their
 * int32 sums are bounded at prepare, so the order of summation changes
 * nothing), and each requantization below is proven equal to
 * tvmd_multiply_by_quantized_multiplier (tvmdevice/quant.h), TFLM's
 * reference.  Integer arithmetic only.
 */
#ifndef TVMD_CMSIS_MPROFILE_H_
#define TVMD_CMSIS_MPROFILE_H_

#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "requantize_m.h"

#if !defined(TVMD_CMSIS_PLAIN) && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define TVMD_CMSIS_MVE 1
#include <arm_mve.h>
#else
#define TVMD_CMSIS_MVE 0
#endif

#if !defined(TVMD_CMSIS_PLAIN) && defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define TVMD_CMSIS_DSP 1
#include <arm_acle.h>
#else
#define TVMD_CMSIS_DSP 0
#endif

/* A loop whose statements are ordered to keep few values live (the DSP
 * paths' SMLAD chains): GCC's scheduler would hoist every load first and
 * spill the sums to the stack on a 13-register CPU. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__arm__)
#define TVMD_CMSIS_KEEP_ORDER __attribute__((optimize("no-schedule-insns")))
#else
#define TVMD_CMSIS_KEEP_ORDER
#endif

/* Four int8 values as one word (unaligned, without breaking aliasing rules:
 * the compiler makes it one load). */
static inline uint32_t tvmd_cmsis_read_s8x4(const int8_t* p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* Two int16 values as one word. */
static inline uint32_t tvmd_cmsis_read_s16x2(const int16_t* p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* One output before its clamp: the bias (may be NULL) added, wrapping as
 * the reference's int32 addition, requantized, offset. */
static inline int32_t tvmd_cmsis_out_value(int32_t acc, const int32_t* bias, int32_t channel, int32_t multiplier,
                                           int32_t shift, int32_t output_offset) {
  if (bias != NULL) acc = tvmd_cmsis_wrap_add(acc, bias[channel]);
  return tvmd_cmsis_requantize_1(acc, multiplier, shift) + output_offset;
}

/* The output clamp to [act_min, act_max] when that range is all of int8 (no
 * activation, or one whose bounds the int8 range already sets, as in every
 * shared model): one SSAT on the DSP path.  Kernels test the range once per
 * call and take this or tvmd_cmsis_out_1 per block of outputs. */
static inline int8_t tvmd_cmsis_clamp_s8(int32_t v) {
#if TVMD_CMSIS_DSP
  return (int8_t)__ssat(v, 8);
#else
  v = v < INT8_MIN ? INT8_MIN : v;
  return (int8_t)(v > INT8_MAX ? INT8_MAX : v);
#endif
}

/* One output: tvmd_cmsis_out_value clamped to [act_min, act_max]. */
static inline int8_t tvmd_cmsis_out_1(int32_t acc, const int32_t* bias, int32_t channel, int32_t multiplier,
                                      int32_t shift, int32_t output_offset, int32_t act_min, int32_t act_max) {
  int32_t v = tvmd_cmsis_out_value(acc, bias, channel, multiplier, shift, output_offset);
  v = v < act_min ? act_min : v;
  v = v > act_max ? act_max : v;
  return (int8_t)v;
}

#if TVMD_CMSIS_DSP
/* SXTB16 / SXTAB16 of a word rotated right by 8 (its bytes 1 and 3): one
 * instruction with the rotation the encoding carries, which GCC does not
 * fold from a C rotate. */
static inline uint32_t tvmd_cmsis_sxtb16_ror8(uint32_t v) {
#if defined(__GNUC__)
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
#else
  return (uint32_t)__sxtb16((v >> 8) | (v << 24));
#endif
}

static inline uint32_t tvmd_cmsis_sxtab16_ror8(uint32_t a, uint32_t v) {
#if defined(__GNUC__)
  uint32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(v));
  return r;
#else
  return (uint32_t)__sxtab16(a, (v >> 8) | (v << 24));
#endif
}

/* Bytewise max / min of two words of four int8: SSUB8 sets the GE flag of
 * each byte where a >= b, SEL takes those bytes from its first operand. */
static inline uint32_t tvmd_cmsis_max_s8x4(uint32_t a, uint32_t b) {
  (void)__ssub8((int8x4_t)a, (int8x4_t)b);
  return (uint32_t)__sel((int8x4_t)a, (int8x4_t)b);
}

static inline uint32_t tvmd_cmsis_min_s8x4(uint32_t a, uint32_t b) {
  (void)__ssub8((int8x4_t)a, (int8x4_t)b);
  return (uint32_t)__sel((int8x4_t)b, (int8x4_t)a);
}
#endif

#if TVMD_CMSIS_MVE
/* tvmd_multiply_by_quantized_multiplier on four lanes, each with its own
 * multiplier and shift (-31..30).  Why it is equal, step by step:
 *  - the left shift (shift > 0) is VSHL by a non-negative amount, which drops
 *    the bits shifted out, as quant.h's uint32 shift does;
 *  - VQRDMULH returns saturate((2ab + 2^31) >> 32) = floor((ab + 2^30) / 2^31),
 *    quant.h's tvmd_sat_rounding_doubling_high_mul, saturating the same one
 *    case (INT32_MIN * INT32_MIN);
 *  - the rounding right shift by e = -min(shift, 0): VRSHL by -e computes
 *    (x + 2^(e-1)) >> e without overflow, i.e. rounds halves up; adding -1
 *    first to a negative x (x & -e has the sign bit of x exactly when e > 0)
 *    turns that into halves away from zero, quant.h's
 *    tvmd_rounding_divide_by_pot: floor((x + 2^(e-1) - 1) / 2^e) for x < 0.
 *    The saturating add keeps INT32_MIN, whose quotient is exact either way. */
static inline int32x4_t tvmd_cmsis_requantize_mve(int32x4_t x, int32x4_t multiplier, int32x4_t shift) {
  const int32x4_t zero = vdupq_n_s32(0);
  const int32x4_t right = vminq_s32(shift, zero);
  x = vshlq_s32(x, vmaxq_s32(shift, zero));
  x = vqrdmulhq_s32(x, multiplier);
  x = vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, right), 31));
  return vrshlq_s32(x, right);
}

/* Output offset added and the activation clamp applied to four requantized lanes. */
static inline int32x4_t tvmd_cmsis_clamp_mve(int32x4_t x, const tvmd_cmsis_quant_t* q) {
  x = vaddq_n_s32(x, q->output_offset);
  x = vmaxq_s32(x, vdupq_n_s32(q->act_min));
  return vminq_s32(x, vdupq_n_s32(q->act_max));
}
#endif

/* ------------------------------------------ int16 x int8 dot products
 * The int16x8 kernels (fully_connected_s16.c, conv_s16.c): int16 values
 * against int8 weights, summed in int64 as arm_nn_vec_mat_mult_t_s16 does
 * (a product is at most 2^22 in magnitude, so every partial sum is exact and
 * the order of summation changes nothing).
 *  - MVE: eight products per VMLALDAVA, the weights widened by the load
 *    (VLDRB.S16); the tail predicated (lanes past n load as zero).
 *  - DSP: two products per SMLALD, each weights word unpacked by SXTB16 into
 *    its even and odd values, the input words repacked to match once for
 *    both rows.
 *  - plain C otherwise. */
static inline void tvmd_cmsis_dot_s16_1x2(const int16_t* x, const int8_t* w0, const int8_t* w1, int32_t n,
                                          int64_t s[2]) {
  int64_t s0 = 0, s1 = 0;
  int32_t i = 0;
#if TVMD_CMSIS_MVE
  for (; i + 8 <= n; i += 8) {
    const int16x8_t xv = vldrhq_s16(x + i);
    s0 = vmlaldavaq_s16(s0, xv, vldrbq_s16(w0 + i));
    s1 = vmlaldavaq_s16(s1, xv, vldrbq_s16(w1 + i));
  }
  if (i < n) {
    const mve_pred16_t t = vctp16q((uint32_t)(n - i));
    const int16x8_t xv = vldrhq_z_s16(x + i, t);
    s0 = vmlaldavaq_s16(s0, xv, vldrbq_z_s16(w0 + i, t));
    s1 = vmlaldavaq_s16(s1, xv, vldrbq_z_s16(w1 + i, t));
    i = n;
  }
#elif TVMD_CMSIS_DSP
  for (; i + 4 <= n; i += 4) {
    const uint32_t xa = tvmd_cmsis_read_s16x2(x + i), xb = tvmd_cmsis_read_s16x2(x + i + 2);
    /* [x0, x2] and [x1, x3]: the order SXTB16 unpacks a weights word in. */
    const uint32_t x02 = (xa & 0xFFFFu) | (xb << 16), x13 = (xa >> 16) | (xb & 0xFFFF0000u);
    uint32_t v = tvmd_cmsis_read_s8x4(w0 + i);
    s0 = __smlald(x02, __sxtb16(v), s0);
    s0 = __smlald(x13, tvmd_cmsis_sxtb16_ror8(v), s0);
    v = tvmd_cmsis_read_s8x4(w1 + i);
    s1 = __smlald(x02, __sxtb16(v), s1);
    s1 = __smlald(x13, tvmd_cmsis_sxtb16_ror8(v), s1);
  }
#endif
  for (; i < n; i++) {
    const int32_t v = x[i];
    s0 += v * (int32_t)w0[i];
    s1 += v * (int32_t)w1[i];
  }
  s[0] = s0;
  s[1] = s1;
}

/* ----------------------------------------- int8 dot products, offset
 * s[r] = sum((x[i] + offset) * w_r[i]) over n values, for the rows w0, w1,
 * modulo 2^32 (x and w int8, offset -128..127 or its negation): wrapping as
 * the reference's int32 sums do where nothing bounds them (BATCH_MATMUL), so
 * every path gives the same bits whatever the order of summation.
 * Kernels: fully_connected_m.c, batch_matmul.c, transpose_conv.c, svdf.c,
 * lstm.c.
 *  - MVE: sixteen int8 products per VMLADAVA; the offset enters as
 *    offset * sum(w), the sum taken by VADDVA in the same loop (as CMSIS-NN's
 *    arm_nn_vec_mat_mult_t_s8 does); the tail predicated.
 *  - DSP: the input widened with its offset by SXTAB16 once per four values
 *    for both rows (x + offset fits int16), each weights word unpacked by
 *    SXTB16, two products per SMLAD.
 *  - plain C otherwise. */
static inline void tvmd_cmsis_dot_s8_1x2(const int8_t* x, const int8_t* w0, const int8_t* w1, int32_t n,
                                         int32_t offset, int32_t s[2]) {
  uint32_t s0 = 0, s1 = 0;
  int32_t i = 0;
#if TVMD_CMSIS_MVE
  int32_t a0 = 0, a1 = 0, sum0 = 0, sum1 = 0;
  for (; i + 16 <= n; i += 16) {
    const int8x16_t xv = vldrbq_s8(x + i), a = vldrbq_s8(w0 + i), b = vldrbq_s8(w1 + i);
    a0 = vmladavaq_s8(a0, xv, a);
    sum0 = vaddvaq_s8(sum0, a);
    a1 = vmladavaq_s8(a1, xv, b);
    sum1 = vaddvaq_s8(sum1, b);
  }
  if (i < n) {
    /* The tail: lanes past n load as zero and add nothing. */
    const mve_pred16_t t = vctp8q((uint32_t)(n - i));
    const int8x16_t xv = vldrbq_z_s8(x + i, t), a = vldrbq_z_s8(w0 + i, t), b = vldrbq_z_s8(w1 + i, t);
    a0 = vmladavaq_s8(a0, xv, a);
    sum0 = vaddvaq_s8(sum0, a);
    a1 = vmladavaq_s8(a1, xv, b);
    sum1 = vaddvaq_s8(sum1, b);
    i = n;
  }
  /* sum((x + offset) * w) = sum(x * w) + offset * sum(w), modulo 2^32. */
  s0 = (uint32_t)a0 + (uint32_t)offset * (uint32_t)sum0;
  s1 = (uint32_t)a1 + (uint32_t)offset * (uint32_t)sum1;
#elif TVMD_CMSIS_DSP
  /* Both halves of a word hold the offset. */
  const uint32_t offsets = ((uint32_t)offset & 0xFFFFu) | ((uint32_t)offset << 16);
  int32_t a0 = 0, a1 = 0;
  for (; i + 4 <= n; i += 4) {
    const uint32_t xw = tvmd_cmsis_read_s8x4(x + i);
    const uint32_t x02 = __sxtab16(offsets, xw), x13 = tvmd_cmsis_sxtab16_ror8(offsets, xw);
    const uint32_t a = tvmd_cmsis_read_s8x4(w0 + i), b = tvmd_cmsis_read_s8x4(w1 + i);
    a0 = __smlad(x02, __sxtb16(a), a0);
    a0 = __smlad(x13, tvmd_cmsis_sxtb16_ror8(a), a0);
    a1 = __smlad(x02, __sxtb16(b), a1);
    a1 = __smlad(x13, tvmd_cmsis_sxtb16_ror8(b), a1);
  }
  s0 = (uint32_t)a0;
  s1 = (uint32_t)a1;
#endif
  for (; i < n; i++) {
    const int32_t v = (int32_t)x[i] + offset;
    s0 += (uint32_t)(v * (int32_t)w0[i]);
    s1 += (uint32_t)(v * (int32_t)w1[i]);
  }
  s[0] = (int32_t)s0;
  s[1] = (int32_t)s1;
}

#endif /* TVMD_CMSIS_MPROFILE_H_ */
