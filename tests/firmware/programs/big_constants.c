/* A model-sized constant table: its bytes are a function of the index, the program checks them all and
 * prints their sum. Named as an export's constants are, so that the linker script places it as one. */
#include <stdint.h>
#include <stdio.h>

#ifndef BIG_BYTES
#define BIG_BYTES (1024u * 1024u)
#endif

#define V(i) (uint8_t)((i) * 7u + 3u)
#define V4(i) V(i), V(i + 1), V(i + 2), V(i + 3)
#define V16(i) V4(i), V4(i + 4), V4(i + 8), V4(i + 12)
#define V64(i) V16(i), V16(i + 16), V16(i + 32), V16(i + 48)
#define V256(i) V64(i), V64(i + 64), V64(i + 128), V64(i + 192)

/* 256 distinct bytes repeated: the pattern of V(i) has period 256 */
const uint8_t tvmgen_big_constant_0[BIG_BYTES] __attribute__((aligned(16))) = {V256(0)};

int main(void) {
  uint32_t sum = 0;
  unsigned bad = 0;
  for (uint32_t i = 0; i < 256; ++i) {
    if (tvmgen_big_constant_0[i] != V(i)) ++bad;
    sum += tvmgen_big_constant_0[i];
  }
  for (uint32_t i = 256; i < BIG_BYTES; i += 4093) sum += tvmgen_big_constant_0[i]; /* zero after the pattern */
  printf("sum=%u bad=%u at=%p\n", (unsigned)sum, bad, (const void*)tvmgen_big_constant_0);
  return bad != 0;
}
