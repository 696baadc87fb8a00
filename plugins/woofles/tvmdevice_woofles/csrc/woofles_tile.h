/*
 * Helpers shared by the woofles kernels: SRAM buffer lookup and the MAC
 * array's output tile (accumulate, add bias, requantize, clamp, write back).
 * Internal to the kernels; static inline so each kernel file stands alone.
 */
#ifndef TVMD_WOOFLES_TILE_H_
#define TVMD_WOOFLES_TILE_H_

#include <stdint.h>
#include <string.h>

#include "tvmdevice/quant.h"
#include "woofles.h"

/* Host view of buffers[index], a device address, required to span nbytes of
 * SRAM; NULL when the address is NULL or the range leaves the SRAM window. */
static inline uint8_t* woofles_buffer(const tvm_device_woofles_t* dev, void* const* buffers, int32_t index,
                                      uint64_t nbytes) {
  uint64_t addr = (uint64_t)(uintptr_t)buffers[index];
  if (addr == 0) return NULL;
  return woofles_translate(dev, addr, nbytes);
}

/* bias[i] from a byte pointer: SRAM buffers carry no alignment promise. */
static inline int32_t woofles_load_i32(const uint8_t* base, int32_t i) {
  int32_t v;
  memcpy(&v, base + (size_t)i * sizeof(int32_t), sizeof(v));
  return v;
}

/* Accumulators wrap like the reference's int32 arithmetic does on two's
 * complement targets, without signed-overflow undefined behaviour. */
static inline uint32_t woofles_mac(uint32_t acc, int32_t x, int32_t w) {
  return acc + (uint32_t)(x * w);
}

/* Finish one output tile of `lanes` channels starting at channel c0: add the
 * bias, requantize per channel with TFLM's double rounding, offset, clamp. */
static inline void woofles_store_tile(const uint32_t* acc, int32_t lanes, int32_t c0, const uint8_t* bias,
                                      const int32_t* multiplier, const int32_t* shift, int32_t output_offset,
                                      int32_t act_min, int32_t act_max, int8_t* out) {
  for (int32_t l = 0; l < lanes; ++l) {
    const int32_t c = c0 + l;
    uint32_t raw = acc[l];
    if (bias != NULL) raw += (uint32_t)woofles_load_i32(bias, c);
    int32_t v = tvmd_multiply_by_quantized_multiplier((int32_t)raw, multiplier[c], shift[c]);
    v = tvmd_clamp_i32((int32_t)((uint32_t)v + (uint32_t)output_offset), act_min, act_max);
    out[c] = (int8_t)v;
  }
}

/* The cycle model's cost factor of int16 elements: the 16-bit datapath
 * (-int16) runs its lanes at half the int8 rate (HALF_RATE in ops/limits.py). */
#define WOOFLES_INT16_RATE 2u

/* Element i of an int8 (wide == 0) or int16 (wide == 1) SRAM buffer; SRAM
 * buffers carry no alignment promise, so int16 goes through memcpy. */
static inline int32_t woofles_load_elem(const uint8_t* base, size_t i, int wide) {
  if (wide) {
    int16_t v;
    memcpy(&v, base + i * sizeof(v), sizeof(v));
    return v;
  }
  return (int8_t)base[i];
}

/* Stores v, already inside the element type's range. */
static inline void woofles_store_elem(uint8_t* base, size_t i, int wide, int32_t v) {
  if (wide) {
    const int16_t s = (int16_t)v;
    memcpy(base + i * sizeof(s), &s, sizeof(s));
  } else {
    base[i] = (uint8_t)(int8_t)v;
  }
}

/*
 * The window loader: it feeds the MAC array (and the PAD kernel) the pixels
 * of an input window of an [N, H, W, C] tensor.  A tap outside the image is
 * in the border: the loader returns NULL and its user supplies the border
 * value (a convolution: the input zero point, whose corrected value 0 adds
 * nothing, so the tap is skipped; PAD: the pad value).
 */
typedef struct {
  int32_t h, w, ch, itemsize;
} woofles_window_t;

static inline const uint8_t* woofles_window_pixel(const uint8_t* base, const woofles_window_t* win, int32_t b,
                                                  int32_t y, int32_t x) {
  if (y < 0 || y >= win->h || x < 0 || x >= win->w) return NULL;
  return base + ((((size_t)b * (size_t)win->h + (size_t)y) * (size_t)win->w + (size_t)x) * (size_t)win->ch) *
                    (size_t)win->itemsize;
}

static inline int32_t woofles_min_i32(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int32_t woofles_max_i32(int32_t a, int32_t b) { return a > b ? a : b; }

#endif /* TVMD_WOOFLES_TILE_H_ */
