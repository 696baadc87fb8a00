/*
 * The scalar requantizations the M-profile paths (mprofile.h, s16.h) run in
 * place of tvmdevice/quant.h's and tvmdevice/fixedpoint.h's portable forms:
 * the same integers in fewer instructions on a 32-bit core.  Plain C that
 * relies only on what GCC and Clang guarantee (a signed right shift is
 * arithmetic, a conversion to a narrower signed type wraps), so the host
 * compiles them too: tests/test_requantize.py builds this header with the
 * system compiler and checks both against the portable forms over the whole
 * range the operator layer allows (every shift, every edge value, dense
 * random operands).  Self-contained: stdint and the core's headers only.
 */
#ifndef TVMD_CMSIS_REQUANTIZE_M_H_
#define TVMD_CMSIS_REQUANTIZE_M_H_

#include <stdint.h>

#include "tvmdevice/fixedpoint.h"

/* tvmd_multiply_by_quantized_multiplier (tvmdevice/quant.h) for a
 * multiplier m >= 0, as TFLM computes every one (from a positive scale), in
 * fewer instructions on a 32-bit CPU: one 64-bit multiply-accumulate (SMLAL)
 * and a few word operations, no mask and threshold.  With x' = x << left
 * (quant.h's shift, bits shifted out dropped):
 *  - quant.h's doubling high multiply is h = floor((x' m + 2^30) / 2^31); it
 *    saturates only for x' = m = INT32_MIN, which m >= 0 rules out.
 *  - Its rounding divide by 2^e (e = -shift >= 1), ties away from zero, is
 *    floor((h + 2^(e-1) - n) / 2^e) with n = 1 when h < 0.  Taking n = 1 when
 *    x' < 0 instead changes nothing: if x' < 0 and h >= 0 then h = 0 (as
 *    x' m <= 0), and both n give 0.  Folding the floors (floor(floor(a / b)
 *    + c) / d) = floor((a + c b) / (b d))):
 *      result = floor((P + 2^(30+e)) / 2^(31+e)),  P = x' m + 2^30 - n 2^31,
 *    P = x' m + 2^30 for x' >= 0 and x' m - 2^30 for x' < 0: the 64-bit
 *    addend of the SMLAL is the sign-extended word 0x40000000 | sign(x').
 *    |x' m| < 2^62, so the high word H of P has |H| <= 2^30, and
 *      e >= 2: result = floor((H + 2^(e-2)) / 2^(e-1)) = ((H >> (e-2)) + 1) >> 1
 *              (with q = floor(H / 2^(e-2)), H = q 2^(e-2) + r, 0 <= r < 2^(e-2):
 *              (H + 2^(e-2)) / 2^(e-1) = (q + 1) / 2 + r / 2^(e-1), and the
 *              second term, below 1/2, never carries (q + 1) / 2 past an
 *              integer), a shift, an add and a shift, without overflow;
 *      e == 1: result = H + (bit 31 of P's low word).
 *  - shift >= 0 (no rounding divide): result = bits 31..62 of x' m + 2^30. */
static inline int32_t tvmd_cmsis_requantize_1(int32_t x, int32_t multiplier, int32_t shift) {
  if (shift >= 0) {
    const int64_t ab = (int64_t)(int32_t)((uint32_t)x << shift) * multiplier + ((int64_t)1 << 30);
    return (int32_t)(uint32_t)((uint64_t)ab >> 31);
  }
  const int32_t e = -shift;
  const int64_t addend = (int64_t)(int32_t)(0x40000000u | ((uint32_t)x & 0x80000000u));
  const int64_t ab = (int64_t)x * multiplier + addend;
  const int32_t high = (int32_t)(uint32_t)((uint64_t)ab >> 32);
  if (e == 1) return high + (int32_t)((uint32_t)ab >> 31);
  return ((high >> (e - 2)) + 1) >> 1;
}

/* tvmd_multiply_by_quantized_multiplier_64 (tvmdevice/fixedpoint.h) for its
 * valid shifts, -31 <= shift <= 14, and multipliers >= 0: the reduced
 * multiplier fits 16 bits, so the product modulo 2^64 is one UMULL and two
 * MLAs; the floor is the arithmetic shift of the wrapped sum, without the
 * portable form's branch, and the conversion to int32 keeps the low word as
 * the portable form's tvmd_wrap_i32 does. */
static inline int32_t tvmd_cmsis_requantize_s64_m(int64_t x, int32_t multiplier, int32_t shift) {
  const int32_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
  const int total_shift = 15 - (int)shift;
  const uint64_t rounded = (uint64_t)x * (uint64_t)(int64_t)reduced + ((uint64_t)1 << (total_shift - 1));
  return (int32_t)((int64_t)rounded >> total_shift);
}

#endif /* TVMD_CMSIS_REQUANTIZE_M_H_ */
