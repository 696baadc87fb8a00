/* quant.h's shift form of the doubling high multiply equals the reference
 * definition (nudge, then division truncating toward zero) on edge cases and
 * random operands, half of them with a Q31 multiplier in [2^30, 2^31). */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include "tvmdevice/quant.h"
static int32_t ref(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  int64_t ab = (int64_t)a * (int64_t)b;
  int64_t nudge = ab >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
  return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}
int main(void) {
  uint64_t s = 88172645463325252ull; long bad = 0;
  int32_t edge[] = {INT32_MIN, INT32_MIN+1, -1, 0, 1, INT32_MAX, INT32_MAX-1, 1<<30, -(1<<30), 12345, -12345};
  for (int i = 0; i < 11; i++) for (int j = 0; j < 11; j++) bad += ref(edge[i], edge[j]) != tvmd_sat_rounding_doubling_high_mul(edge[i], edge[j]);
  for (long k = 0; k < 2000000; k++) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    int32_t a = (int32_t)(uint32_t)s, b = (int32_t)(uint32_t)(s >> 32);
    if (k & 1) b = (b & 0x7fffffff) | 0x40000000;
    bad += ref(a, b) != tvmd_sat_rounding_doubling_high_mul(a, b);
  }
  printf("mismatches: %ld\n", bad); return bad != 0;
}
