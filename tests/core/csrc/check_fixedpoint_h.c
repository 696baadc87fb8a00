/* tvmdevice/fixedpoint.h against the definitions it restates, computed here
 * the long way (128-bit integers, floor division, bit loops):
 *  - tvmd_multiply_by_quantized_multiplier_64 is TFLM's int64
 *    MultiplyByQuantizedMultiplier, exactly for |x| < 2^47 (TFLM's asserted
 *    range) and as the int64 product modulo 2^64 beyond it, for every shift in
 *    [-31, 14] and multipliers in [0, 2^31);
 *  - the floor shifts are floor divisions, the wraps two's complement, the
 *    saturating sums clamped, the leading-zero count a bit loop, the rounded
 *    average the nearest integer with halves away from zero.
 * Prints the number of mismatches; exits non-zero on any. */
#include <stdint.h>
#include <stdio.h>

#include "tvmdevice/fixedpoint.h"

typedef __int128 i128;

static uint64_t state = 0x2545F4914F6CDD1Dull;

static uint64_t next(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

static long bad = 0, checked = 0;

static void expect(int ok, const char* what, long long a, long long b, long long c) {
  ++checked;
  if (!ok && bad++ < 8) printf("%s: %lld %lld %lld\n", what, a, b, c);
}

static i128 floor_div(i128 a, i128 b) { /* b > 0 */
  const i128 q = a / b;
  return (q * b != a && a < 0) ? q - 1 : q;
}

/* TFLM's formula: reduced multiplier, int64 product (wrapping), rounding term, >> total_shift, int32 cast. */
static int32_t reference_64(int64_t x, int32_t m, int32_t shift) {
  const i128 reduced = m < 0x7FFF0000 ? ((i128)m + (1 << 15)) / 65536 : 0x7FFF;
  const int t = 15 - shift;
  i128 product = (i128)x * reduced;
  const i128 two64 = (i128)1 << 64;
  product = floor_div(product + ((i128)1 << 63), two64) * -two64 + product; /* into [-2^63, 2^63) */
  i128 sum = product + ((i128)1 << (t - 1));
  if (sum >= ((i128)1 << 63)) sum -= two64;
  i128 y = floor_div(sum, (i128)1 << t);
  y = y - floor_div(y + ((i128)1 << 31), (i128)1 << 32) * ((i128)1 << 32); /* low 32 bits, signed */
  return (int32_t)y;
}

int main(void) {
  static const int32_t edge_m[] = {0, 1, 32767, 32768, 0x7FFF0000 - 1, 0x7FFF0000, 1 << 30, INT32_MAX};
  for (int32_t s = -31; s <= 14; ++s) {
    for (int k = 0; k < 200000; ++k) {
      const uint64_t r = next();
      const int bits = k % 64;
      int64_t x = (int64_t)(r >> (63 - bits)) * ((k & 64) ? -1 : 1);
      if (k % 7 == 0) x = (int64_t)next();
      const int32_t m = (k % 11 == 0) ? edge_m[k % 8] : (int32_t)(next() & 0x7FFFFFFFu);
      expect(tvmd_multiply_by_quantized_multiplier_64(x, m, s) == reference_64(x, m, s), "mbqm64", (long long)x, m,
             s);
    }
    expect(tvmd_multiply_by_quantized_multiplier_64(INT64_MIN, INT32_MAX, s) == reference_64(INT64_MIN, INT32_MAX, s),
           "mbqm64 min", INT64_MIN, INT32_MAX, s);
  }
  for (int k = 0; k < 1000000; ++k) {
    const uint64_t r = next();
    const int32_t a = (int32_t)(uint32_t)r, b = (int32_t)(uint32_t)(r >> 32);
    const int n = (int)(r % 32), n64 = (int)(r % 64);
    expect(tvmd_floor_shift_i32(a, n) == (int32_t)floor_div(a, (i128)1 << n), "floor32", a, n, 0);
    expect(tvmd_floor_shift_i64((int64_t)r, n64) == (int64_t)floor_div((int64_t)r, (i128)1 << n64), "floor64",
           (long long)r, n64, 0);
    expect(tvmd_wrap_i32((uint32_t)a) == a && tvmd_wrap_i64(r) == (int64_t)r, "wrap", a, 0, 0);
    expect(tvmd_add_wrap_i32(a, b) == (int32_t)((int64_t)a + b - (((int64_t)a + b > INT32_MAX) ? ((int64_t)1 << 32) : 0)
                                                + (((int64_t)a + b < INT32_MIN) ? ((int64_t)1 << 32) : 0)),
           "add_wrap", a, b, 0);
    const int64_t sum = (int64_t)a + b, diff = (int64_t)a - b;
    expect(tvmd_saturating_add_i32(a, b) == (sum > INT32_MAX ? INT32_MAX : sum < INT32_MIN ? INT32_MIN : sum),
           "sat_add", a, b, 0);
    expect(tvmd_saturating_sub_i32(a, b) == (diff > INT32_MAX ? INT32_MAX : diff < INT32_MIN ? INT32_MIN : diff),
           "sat_sub", a, b, 0);
    const uint32_t u = (uint32_t)r >> (r >> 59);
    int clz = 0;
    for (uint32_t v = u; clz < 32 && !(v & 0x80000000u); v <<= 1) ++clz;
    expect(tvmd_count_leading_zeros_u32(u) == clz, "clz", u, 0, 0);
  }
  expect(tvmd_count_leading_zeros_u32(0) == 32, "clz0", 0, 0, 0);
  for (int32_t count = 1; count <= 1024; ++count) {
    for (int k = 0; k < 2000; ++k) {
      const int32_t sum = (k < 200) ? k - 100 : (int32_t)(next() % (65536u * (uint32_t)count)) - 32768 * count;
      const i128 mag = floor_div(2 * (i128)(sum < 0 ? -(i128)sum : sum) + count, 2 * (i128)count);
      expect(tvmd_rounded_average_i32(sum, count) == (int32_t)(sum < 0 ? -mag : mag), "average", sum, count, 0);
    }
  }
  printf("checked: %ld\nmismatches: %ld\n", checked, bad);
  return bad != 0;
}
