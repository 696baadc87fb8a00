/* The instruction-set forms of the fixed-point math, built for the CPU under
 * test by its own compiler (firmware under QEMU on Cortex-M55 / M4 / M3, or
 * the host), against the portable forms of tvmdevice/quant.h and
 * tvmdevice/fixedpoint.h:
 *  - tvmd_cmsis_requantize_1 (mprofile.h) for every shift in [-31, 30];
 *  - tvmd_cmsis_requantize_s64 as this CPU builds it (s16.h: the UMULL form
 *    with DSP or Helium) for every shift in [-31, 14];
 *  - with Helium: tvmd_cmsis_requantize_mve's lanes (shifts [-31, 30]), and
 *    softmax.c's lane-wise exp_on_negative_values_mve and rdpot_mve;
 * each over edge values and pseudo-random operands (multipliers in
 * [0, 2^31), the range the operator layer produces).  Prints the count of
 * checks and of mismatches; exits 1 on any mismatch. */
#include <stdio.h>

#include "softmax.c" /* its static Helium exponential */
#include "s16.h"

static uint32_t state = 2463534242u;

static uint32_t next(void) {
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}

static long checked = 0, bad = 0;

static void expect(int ok, const char* what, long a, long b, long c) {
  ++checked;
  if (!ok && bad++ < 5) printf("%s: %ld %ld %ld\n", what, a, b, c);
}

static const int32_t kEdgeX[] = {INT32_MIN, INT32_MIN + 1, -(1 << 30), -65536, -129, -128, -2, -1, 0, 1, 2,
                                 127, 128, 65535, 1 << 30, INT32_MAX - 1, INT32_MAX};
static const int32_t kEdgeM[] = {0, 1, 32767, 32768, 0x7FFF0000 - 1, 0x7FFF0000, 1 << 30, INT32_MAX};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int32_t random_multiplier(int k) {
  const int32_t m = (int32_t)(next() & 0x7FFFFFFFu);
  return (k & 1) ? m : (m | 0x40000000);
}

static void requantize_32(void) {
  for (int32_t s = -31; s <= 30; ++s) {
    for (int i = 0; i < COUNT(kEdgeX); ++i) {
      for (int j = 0; j < COUNT(kEdgeM); ++j) {
        expect(tvmd_cmsis_requantize_1(kEdgeX[i], kEdgeM[j], s) ==
                   tvmd_multiply_by_quantized_multiplier(kEdgeX[i], kEdgeM[j], s), "requantize_1", kEdgeX[i],
               kEdgeM[j], s);
      }
    }
    for (int k = 0; k < 20000; ++k) {
      const int32_t x = (k & 2) ? (int32_t)next() : (int32_t)(next() % 8193u) - 4096;
      const int32_t m = random_multiplier(k);
      expect(tvmd_cmsis_requantize_1(x, m, s) == tvmd_multiply_by_quantized_multiplier(x, m, s), "requantize_1", x,
             m, s);
    }
  }
}

static void requantize_64(void) {
  for (int32_t s = -31; s <= 14; ++s) {
    for (int k = 0; k < 20000; ++k) {
      const uint64_t r = ((uint64_t)next() << 32) | next();
      const int bits = k % 64;
      const int64_t x = (k & 64) ? (int64_t)r : (int64_t)(r >> (63 - bits)) * ((k & 128) ? -1 : 1);
      const int32_t m = (k % 13 == 0) ? kEdgeM[k % COUNT(kEdgeM)] : random_multiplier(k);
      expect(tvmd_cmsis_requantize_s64(x, m, s) == tvmd_multiply_by_quantized_multiplier_64(x, m, s),
             "requantize_s64", (long)(x >> 32), m, s);
    }
  }
}

#if TVMD_CMSIS_MVE
static void lanes(void) {
  for (int k = 0; k < 300000; ++k) {
    int32_t x[4], m[4], s[4], got[4];
    for (int l = 0; l < 4; ++l) {
      x[l] = (k & 4) ? (int32_t)next() : (k & 8) ? kEdgeX[next() % COUNT(kEdgeX)] : (int32_t)(next() % 8193u) - 4096;
      m[l] = (k % 7 == 0) ? kEdgeM[next() % COUNT(kEdgeM)] : random_multiplier(k + l);
      s[l] = (int32_t)(next() % 62u) - 31;
    }
    vst1q_s32(got, tvmd_cmsis_requantize_mve(vld1q_s32(x), vld1q_s32(m), vld1q_s32(s)));
    for (int l = 0; l < 4; ++l) {
      expect(got[l] == tvmd_multiply_by_quantized_multiplier(x[l], m[l], s[l]), "requantize_mve", x[l], m[l], s[l]);
    }
  }
  for (int k = 0; k < 300000; ++k) {
    int32_t a[4], got[4], shifted[4];
    const int exponent = 1 + (int)(next() % 34u); /* past 31: the rounded 0 */
    for (int l = 0; l < 4; ++l) {
      const uint32_t r = next();
      /* Q5.26 values <= 0: all of them at random, small ones densely, the edges. */
      a[l] = (k & 1) ? -(int32_t)(r >> 1) : (k & 2) ? -(int32_t)(r % (1u << 22)) : (int32_t)(0u - (r % 3u));
      if (k % 101 == 0) a[l] = INT32_MIN + l;
    }
    vst1q_s32(got, exp_on_negative_values_mve(vld1q_s32(a)));
    vst1q_s32(shifted, rdpot_mve(vld1q_s32(a), exponent));
    for (int l = 0; l < 4; ++l) {
      expect(got[l] == tvmd_fp_exp_on_negative_values(a[l], SCALED_DIFF_INTEGER_BITS), "exp_mve", a[l], 0, 0);
      expect(shifted[l] == rdpot(a[l], exponent), "rdpot_mve", a[l], exponent, 0);
      if (exponent < 32) {
        int32_t n[4];
        vst1q_s32(n, TVMD_RDPOT_N(vld1q_s32(a), 2));
        expect(n[l] == tvmd_rounding_divide_by_pot(a[l], 2), "rdpot_n", a[l], 2, 0);
      }
    }
  }
}
#endif

int main(void) {
  requantize_32();
  requantize_64();
#if TVMD_CMSIS_MVE
  lanes();
#endif
  printf("mve: %d\ndsp: %d\nchecked: %ld\nmismatches: %ld\n", TVMD_CMSIS_MVE, TVMD_CMSIS_DSP, checked, bad);
  return bad != 0;
}
