/*
 * The firmware platform's test program: an int8 fully connected layer.
 *
 *   dense INPUT OUTPUT
 *
 * INPUT holds N samples of DENSE_COLS int8 values (1 <= N <= DENSE_MAX_SAMPLES); OUTPUT gets N rows of
 * DENSE_ROWS int8 values: for each row r, clamp(round((bias[r] + sum_c w[r][c] * (x[c] - IN_ZP)) *
 * MULT / 2^SHIFT) + OUT_ZP).  The weights, bias and constants come from dense_weights.h, which the test
 * writes (and computes the same thing in Python).  Each sample's arithmetic is one measured region.
 *
 * Exit status: 0 done, 2 usage, 3 cannot read INPUT, 4 INPUT has a bad size, 5 cannot write OUTPUT.
 */
#include <stdint.h>
#include <stdio.h>

#include "dense_weights.h"
#include "tvmdevice_fw.h"

#define DENSE_MAX_SAMPLES 8

static int8_t input[DENSE_MAX_SAMPLES][DENSE_COLS];
static int8_t output[DENSE_MAX_SAMPLES][DENSE_ROWS];
static int32_t samples_done = -1; /* in .data: -1 until the first sample ran */

static int8_t requantize(int32_t acc) {
  int64_t scaled = ((int64_t)acc * DENSE_MULT + ((int64_t)1 << (DENSE_SHIFT - 1))) >> DENSE_SHIFT;
  scaled += DENSE_OUT_ZP;
  if (scaled < -128) {
    scaled = -128;
  }
  if (scaled > 127) {
    scaled = 127;
  }
  return (int8_t)scaled;
}

static void dense(const int8_t *x, int8_t *y) {
  for (int r = 0; r < DENSE_ROWS; ++r) {
    int32_t acc = dense_bias[r];
    for (int c = 0; c < DENSE_COLS; ++c) {
      acc += (int32_t)dense_weights[r][c] * ((int32_t)x[c] - DENSE_IN_ZP);
    }
    y[r] = requantize(acc);
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s INPUT OUTPUT\n", argc > 0 ? argv[0] : "dense");
    return 2;
  }
  FILE *in = fopen(argv[1], "rb");
  if (in == NULL) {
    fprintf(stderr, "dense: cannot open %s\n", argv[1]);
    return 3;
  }
  size_t got = fread(input, 1, sizeof(input) + 1, in);
  fclose(in);
  if (got == 0 || got > sizeof(input) || got % DENSE_COLS != 0) {
    fprintf(stderr, "dense: %s holds %u bytes, expected 1 to %d samples of %d\n", argv[1], (unsigned)got,
            DENSE_MAX_SAMPLES, DENSE_COLS);
    return 4;
  }
  int n = (int)(got / DENSE_COLS);
  for (int i = 0; i < n; ++i) {
    tvmd_fw_region_begin();
    dense(input[i], output[i]);
    tvmd_fw_region_end();
    samples_done = i + 1;
  }
  FILE *out = fopen(argv[2], "wb");
  if (out == NULL || fwrite(output, DENSE_ROWS, (size_t)n, out) != (size_t)n) {
    fprintf(stderr, "dense: cannot write %s\n", argv[2]);
    if (out != NULL) {
      fclose(out);
    }
    return 5;
  }
  fclose(out);
  long checksum = 0;
  for (int i = 0; i < n; ++i) {
    for (int r = 0; r < DENSE_ROWS; ++r) {
      checksum = checksum * 31 + output[i][r];
      checksum %= 1000003;
    }
  }
  printf("dense: %d samples, checksum %ld\n", (int)samples_done, checksum);
  return 0;
}
