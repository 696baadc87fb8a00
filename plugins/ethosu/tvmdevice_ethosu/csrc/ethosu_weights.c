/*
 * The mlw weight stream, as Vela's encoder writes it (ethosu/mlw_codec in the
 * ethos-u-vela sources; the decoder there is the reference this follows):
 *
 * bits are read least significant first, from byte 0 on.  The stream is a
 * sequence of slices; a slice header is ZDIV (3 bits: the Golomb-Rice divisor
 * exponent of the zero runs, 6 = no zero runs, 7 = padding up to the next
 * byte, the end of the stream when no byte follows), SLICELEN (15, +1: the
 * non-zero weights of the slice), WDIV (3: the weights' divisor exponent,
 * 7 = uncompressed), WTRUNC (1: truncated unary codes), NEWPAL (1); a new
 * palette carries DIROFS (5), PALSIZE (5, +1 unless 0), PALBITS (3, +2) and
 * PALSIZE entries of PALBITS bits.  The slice's values come in chunks: the
 * unary parts of up to 12 (8) weights and zero runs, then the remainders of
 * the previous chunk's symbols.  A value below PALSIZE indexes the palette,
 * others are offset by DIROFS - PALSIZE; the result holds the sign in bit 0
 * and the magnitude above it.  Zero runs (one more than the weights when the
 * palette is new: a leading run) are inserted after each weight.
 */
#include "ethosu_weights.h"

#include <stddef.h>

typedef struct {
  const uint8_t* data;
  uint32_t size; /* bytes */
  uint32_t pos;  /* next bit */
  int bad;       /* read past the end */
} bits_t;

static uint32_t take(bits_t* b, int n) {
  const uint32_t byte = b->pos >> 3;
  uint32_t v = 0;
  int i;
  if (n <= 24 && byte + 4u <= b->size) { /* fast path: one little-endian 32-bit window */
    const uint32_t window = (uint32_t)b->data[byte] | (uint32_t)b->data[byte + 1] << 8 |
                            (uint32_t)b->data[byte + 2] << 16 | (uint32_t)b->data[byte + 3] << 24;
    b->pos += (uint32_t)n;
    return n == 0 ? 0u : (window >> (b->pos - (uint32_t)n - byte * 8u)) & ((1u << n) - 1u);
  }
  for (i = 0; i < n; i++, b->pos++) {
    const uint32_t at = b->pos >> 3;
    if (at >= b->size) {
      b->bad = 1;
      return 0;
    }
    v |= (uint32_t)((b->data[at] >> (b->pos & 7u)) & 1u) << i;
  }
  return v;
}

/* The unary part of one chunk: the quotients it completes into q[], the run still open in *carry. */
typedef struct {
  int n;
  int32_t q[12];
} quotients_t;

/* A weight's value from its decoded index: the palette, or the index offset; sign in bit 0. */
static int16_t weight_value(int32_t index, const int16_t* palette, int palsize, int diroffset) {
  const int32_t value = index < palsize ? palette[index] : index - palsize + diroffset;
  return (int16_t)((value & 1) ? -(value >> 1) : (value >> 1));
}

/* Values wait in rings until both a weight and the zero run after it are known: the stream's flow
 * control keeps the weights and the zero runs within a few chunks of each other. */
#define RING 64

/* The values numbered [skip, skip + capacity) go to out[0..capacity); with `strict`, a value past them is
 * an error (-2), else the decoder stops there (returning skip + capacity). */
#define EMIT(v)                                                 \
  do {                                                          \
    if (written >= skip && written - skip >= capacity) {        \
      if (strict) return -2;                                    \
      return (int32_t)written;                                  \
    }                                                           \
    if (written >= skip) out[written - skip] = (int16_t)(v);    \
    written++;                                                  \
  } while (0)

static int32_t decode(const uint8_t* stream, uint32_t size, uint32_t skip, int16_t* out, uint32_t capacity,
                      int strict) {
  bits_t b = {stream, size, 0, 0};
  int32_t w_val[RING], z_val[RING];
  int16_t palette[32];
  int palsize = 0, palbits = 2, diroffset = 0, have_palette = 0, prev_runs = -1;
  uint32_t written = 0;

  if (stream == NULL || out == NULL) return -1;
  for (;;) {
    uint32_t zdiv = take(&b, 3);
    int runs, wdiv, trunc, newpal, uncompressed, zlen, w_n, z_n;
    int w_pos = 0, z_pos = 0, w_done = 0, z_done = 0, w_carry = 0, z_carry = 0;
    int w_prev = 0, z_prev = 0, i, emitted = 0, lead = 0;
    quotients_t wq = {0, {0}}, zq = {0, {0}}, wq_prev = {0, {0}}, zq_prev = {0, {0}};
    while (zdiv == 7u && !b.bad) { /* padding to a byte boundary; the end when no byte follows */
      b.pos = (b.pos + 7u) & ~7u;
      if (b.pos / 8u == size) return (int32_t)written;
      zdiv = take(&b, 3);
    }
    if (b.bad) return -1;
    if (b.pos / 8u == size) return (int32_t)written;
    if (zdiv > 3u && zdiv != 6u) return -1;
    runs = zdiv != 6u;
    w_n = (int)take(&b, 15) + 1;
    wdiv = (int)take(&b, 3);
    trunc = (int)take(&b, 1);
    newpal = (int)take(&b, 1);
    if (!newpal && (!have_palette || runs != prev_runs)) return -1;
    if (newpal) {
      diroffset = (int)take(&b, 5);
      palsize = (int)take(&b, 5);
      if (palsize > 0) palsize += 1;
      palbits = (int)take(&b, 3) + 2;
      for (i = 0; i < palsize; i++) palette[i] = (int16_t)take(&b, palbits);
      have_palette = 1;
    }
    prev_runs = runs;
    if (b.bad) return -1;
    uncompressed = wdiv == 7;
    if (uncompressed) { /* remainders only, as wide as a palette index (or PALBITS without a palette) */
      wdiv = 0;
      if (palsize > 0) {
        while ((1 << wdiv) < palsize) wdiv++;
      } else {
        wdiv = palbits;
      }
    } else if (wdiv > 5) {
      return -1;
    }
    z_n = w_n + (newpal ? 1 : 0);
    zlen = zdiv < 3u ? 12 : 8;
    do {
      const int balance = runs ? w_pos - z_pos : 0;
      const int w_on = (balance < 8 || !runs) && w_pos < w_n;
      const int z_on = balance >= 0 && runs && z_pos < z_n;
      uint32_t w_unary0 = 0;
      if (w_on && !uncompressed) w_unary0 = take(&b, 12);
      if (z_on) {
        const uint32_t unary = take(&b, zlen);
        int cnt = z_carry;
        zq.n = 0;
        for (i = 0; i < zlen; i++) {
          if (unary >> i & 1u) {
            cnt++;
          } else {
            zq.q[zq.n++] = cnt;
            cnt = 0;
          }
        }
        z_carry = cnt;
        z_pos += zq.n;
      }
      if (w_on) {
        const int symbols = uncompressed && wdiv > 5 ? 8 : 12;
        int ones = 0, cnt = w_carry;
        uint32_t unary1;
        for (i = 0; i < symbols; i++) ones += (int)(w_unary0 >> i & 1u);
        unary1 = take(&b, ones);
        wq.n = 0;
        for (i = 0; i < symbols; i++) {
          int code = 0;
          if (w_unary0 >> i & 1u) {
            code = 1 + (int)(unary1 & 1u);
            unary1 >>= 1;
          }
          cnt += code;
          if (code < 2 || trunc) {
            wq.q[wq.n++] = cnt;
            cnt = 0;
          }
        }
        w_carry = cnt;
        w_pos += wq.n;
      }
      if (w_prev) {
        for (i = 0; i < wq_prev.n && w_done < w_n; i++, w_done++) {
          if (w_done - emitted >= RING) return -1; /* beyond the flow control's reach */
          w_val[w_done % RING] = (wq_prev.q[i] << wdiv) + (int32_t)take(&b, wdiv);
        }
      }
      if (z_prev) {
        for (i = 0; i < zq_prev.n && z_done < z_n; i++, z_done++) {
          if (z_done - emitted >= RING) return -1;
          z_val[z_done % RING] = (zq_prev.q[i] << (int)zdiv) + (int32_t)take(&b, (int)zdiv);
        }
      }
      if (b.bad) return -1;
      /* write out what is complete: a new palette's slice may start with zeros (run 0), then each
       * weight and the zero run after it */
      if (runs && newpal && !lead && z_done > 0) {
        if (z_val[0] < 0) return -1;
        for (i = 0; i < z_val[0]; i++) EMIT(0);
        lead = 1;
      }
      while (emitted < w_done && (!runs || ((lead || !newpal) && z_done > emitted + newpal))) {
        const int32_t index = w_val[emitted % RING];
        int32_t zeros = runs ? z_val[(emitted + newpal) % RING] : 0;
        if (index >= 512 || index < 0) return -1; /* the hardware's weights are 9 bits */
        EMIT(weight_value(index, palette, palsize, diroffset));
        if (zeros < 0) return -1;
        for (; zeros > 0; zeros--) EMIT(0);
        emitted++;
      }
      w_prev = w_on;
      z_prev = z_on;
      wq_prev = wq;
      zq_prev = zq;
    } while (w_prev || z_prev);

    if (emitted != w_n || (runs && newpal && !lead)) return -1; /* the slice ended short */
  }
}

int32_t ethosu_mlw_decode(const uint8_t* stream, uint32_t size, int16_t* out, uint32_t capacity) {
  return decode(stream, size, 0, out, capacity, 1);
}

int32_t ethosu_mlw_decode_window(const uint8_t* stream, uint32_t size, uint32_t skip, int16_t* out,
                                 uint32_t capacity) {
  if (skip > UINT32_MAX - capacity) return -2;
  return decode(stream, size, skip, out, capacity, 0);
}
