/* requantize_m.h's M-profile forms equal the core's portable ones
 * (tvmdevice/quant.h, tvmdevice/fixedpoint.h) over the range the operator
 * layer allows: multipliers in [0, 2^31) and
 *   32-bit: every shift in [-31, 30], accumulators every int32
 *     (exhaustive in [-2^16, 2^16] for each shift and a spread of
 *      multipliers, edge values crossed with edge multipliers, and
 *      uniformly random operands);
 *   64-bit: every shift in [-31, 14], accumulators every int64 (edges, and
 *     random values drawn at every magnitude 2^0 .. 2^63).
 * Prints the number of mismatches; exits non-zero on any. */
#include <stdint.h>
#include <stdio.h>

#include "requantize_m.h"

static uint64_t state = 0x9E3779B97F4A7C15ull;

static uint64_t next(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

static long bad32 = 0, bad64 = 0, checked = 0;

static void check32(int32_t x, int32_t m, int32_t s) {
  ++checked;
  if (tvmd_cmsis_requantize_1(x, m, s) != tvmd_multiply_by_quantized_multiplier(x, m, s)) {
    if (bad32++ < 5) printf("32-bit: x=%ld m=%ld shift=%ld\n", (long)x, (long)m, (long)s);
  }
}

static void check64(int64_t x, int32_t m, int32_t s) {
  ++checked;
  if (tvmd_cmsis_requantize_s64_m(x, m, s) != tvmd_multiply_by_quantized_multiplier_64(x, m, s)) {
    if (bad64++ < 5) printf("64-bit: x=%lld m=%ld shift=%ld\n", (long long)x, (long)m, (long)s);
  }
}

int main(void) {
  static const int32_t edge_x[] = {INT32_MIN, INT32_MIN + 1, -(1 << 30) - 1, -(1 << 30), -65536, -32768, -129,
                                   -128, -3, -2, -1, 0, 1, 2, 3, 127, 128, 32767, 65536, 1 << 30,
                                   (1 << 30) + 1, INT32_MAX - 1, INT32_MAX};
  static const int32_t edge_m[] = {0, 1, 2, 32767, 32768, 0x7FFF0000 - 1, 0x7FFF0000, 1 << 30, (1 << 30) + 1,
                                   1518500250, INT32_MAX - 1, INT32_MAX};
  const int nx = (int)(sizeof edge_x / sizeof edge_x[0]), nm = (int)(sizeof edge_m / sizeof edge_m[0]);

  for (int32_t s = -31; s <= 30; ++s) {
    for (int i = 0; i < nx; ++i)
      for (int j = 0; j < nm; ++j) check32(edge_x[i], edge_m[j], s);
    for (int j = 0; j < 8; ++j) {
      const int32_t m = j < 2 ? edge_m[nm - 1 - j] : (int32_t)((next() & 0x3FFFFFFFu) | 0x40000000u);
      for (int32_t x = -65536; x <= 65536; ++x) check32(x, m, s);
    }
    for (int k = 0; k < 400000; ++k) {
      const uint64_t r = next();
      const int32_t m = (int32_t)((r >> 32) & 0x7FFFFFFFu);
      check32((int32_t)(uint32_t)r, (k & 1) ? m : (m | 0x40000000), s);
    }
  }

  static const int64_t edge_x64[] = {INT64_MIN, INT64_MIN + 1, -((int64_t)1 << 47) - 1, -((int64_t)1 << 47),
                                     -((int64_t)1 << 32), INT32_MIN, -65536, -1, 0, 1, 65535, INT32_MAX,
                                     (int64_t)1 << 32, ((int64_t)1 << 47) - 1, (int64_t)1 << 47,
                                     INT64_MAX - 1, INT64_MAX};
  const int nx64 = (int)(sizeof edge_x64 / sizeof edge_x64[0]);
  for (int32_t s = -31; s <= 14; ++s) {
    for (int i = 0; i < nx64; ++i)
      for (int j = 0; j < nm; ++j) check64(edge_x64[i], edge_m[j], s);
    for (int k = 0; k < 400000; ++k) {
      const uint64_t r = next();
      const int bits = k % 64;
      const int64_t x = (int64_t)(r >> (63 - bits)) * ((k & 64) ? -1 : 1); /* |x| < 2^(bits+1) */
      const int32_t m = (int32_t)(next() & 0x7FFFFFFFu);
      check64(x, (k & 128) ? m : (m | 0x40000000), s);
      check64((int64_t)next(), m, s); /* any int64: the wrapping product */
    }
    /* Exactly on the rounding ties: x * reduced + 2^(t-1) a multiple of 2^t, and one off. */
    const int t = 15 - s;
    for (int32_t reduced = 1; reduced <= 0x7FFF; reduced += 97) {
      const int32_t m = (reduced << 16) - (1 << 15); /* rounds to `reduced` */
      for (int64_t q = -40; q <= 40; ++q) {
        const int64_t target = q * ((int64_t)1 << t) - ((int64_t)1 << (t - 1));
        const int64_t x = target / reduced;
        for (int64_t d = -1; d <= 1; ++d) check64(x + d, m, s);
      }
    }
  }
  printf("checked: %ld\nmismatches: %ld\n", checked, bad32 + bad64);
  return bad32 + bad64 != 0;
}
