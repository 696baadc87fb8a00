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

/* The requantized, offset and clamped int8 of an int32 sum whose bias is
 * already added: tvmd_cmsis_output_s8 without the bias. */
static inline int8_t tvmd_cmsis_narrow_s8(int32_t acc, int32_t multiplier, int32_t shift,
                                          const tvmd_cmsis_quant_t* q) {
  int32_t v = tvmd_multiply_by_quantized_multiplier(acc, multiplier, shift) + q->output_offset;
  v = v < q->act_min ? q->act_min : v;
  v = v > q->act_max ? q->act_max : v;
  return (int8_t)v;
}

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

#endif /* TVMD_CMSIS_MPROFILE_H_ */
