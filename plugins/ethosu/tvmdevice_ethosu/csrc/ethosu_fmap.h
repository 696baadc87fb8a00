/*
 * What the operations share: reading the register file (16-bit registers,
 * 32-bit addresses), the IFM and OFM as their registers describe them, the
 * refusal of a field value, and the OFM rescale.
 */
#ifndef TVMDEVICE_ETHOSU_FMAP_H_
#define TVMDEVICE_ETHOSU_FMAP_H_

#include <stdint.h>

#include "ethosu_npu.h"

#ifdef __cplusplus
extern "C" {
#endif

#define REG(npu, r) ((npu)->reg16[(r) - 0x100])

/* round_mode values of IFM_PRECISION / OFM_PRECISION (Arm's register interface) */
enum { ETHOSU_ROUND_TFL = 0, ETHOSU_ROUND_TRUNCATE = 1, ETHOSU_ROUND_NATURAL = 2 };

static inline int32_t sext16(uint16_t v) { return (int32_t)(int16_t)v; }

static inline uint64_t reg_addr(const ethosu_npu_t* npu, uint32_t r) {
  return (uint64_t)npu->hi32[r] << 32 | npu->reg32[r];
}

/* A feature map as its registers describe it (tile 0). */
typedef struct {
  uint32_t region;
  uint64_t base;
  uint64_t stride_x, stride_y, stride_c;
  int32_t h, w, c;
  int nhcwb16;
  int32_t zero_point;
  uint32_t elem;      /* bytes per element: 1, 2 or 4 (the precision field) */
  int is_signed;
  const int8_t* data; /* execute mode: the region's memory */
} fmap_t;

/* An element's offset in its region (Vela's register_command_stream_util.get_address with the
 * strides of get_strides): in NHCWB16 a brick holds 16 channels of `elem` bytes each. */
static inline uint64_t fm_offset(const fmap_t* f, int32_t y, int32_t x, int32_t c) {
  uint64_t off = f->base + (uint64_t)y * f->stride_y + (uint64_t)x * f->stride_x;
  if (f->nhcwb16) return off + (uint64_t)(c / 16) * f->stride_c + (uint64_t)(c % 16) * f->elem;
  return off + (uint64_t)c * f->elem;
}

/* The element at (y, x, c), little-endian, sign- or zero-extended by the precision. */
static inline int64_t fm_read(const fmap_t* f, int32_t y, int32_t x, int32_t c) {
  const uint8_t* p = (const uint8_t*)f->data + fm_offset(f, y, x, c);
  if (f->elem == 1u) return f->is_signed ? (int64_t)(int8_t)p[0] : (int64_t)p[0];
  if (f->elem == 2u) {
    const uint16_t v = (uint16_t)(p[0] | (uint16_t)p[1] << 8);
    return f->is_signed ? (int64_t)(int16_t)v : (int64_t)v;
  } else {
    const uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return f->is_signed ? (int64_t)(int32_t)v : (int64_t)v;
  }
}

/* Store `v` (already within the precision's range) at (y, x, c) of an OFM in `mem`. */
static inline void fm_write(const fmap_t* f, uint8_t* mem, int32_t y, int32_t x, int32_t c, int64_t v) {
  uint8_t* p = mem + fm_offset(f, y, x, c);
  uint32_t i;
  for (i = 0; i < f->elem; i++) p[i] = (uint8_t)((uint64_t)v >> (8u * i));
}

/* The range of a precision's values. */
static inline int64_t fm_min(const fmap_t* f) { return f->is_signed ? -((int64_t)1 << (8u * f->elem - 1u)) : 0; }
static inline int64_t fm_max(const fmap_t* f) {
  return f->is_signed ? ((int64_t)1 << (8u * f->elem - 1u)) - 1 : ((int64_t)1 << (8u * f->elem)) - 1;
}

/* The largest |element - zero point| of a feature map. */
static inline uint64_t fm_magnitude(const fmap_t* f) {
  const int64_t lo = fm_min(f) - f->zero_point, hi = fm_max(f) - f->zero_point;
  return (uint64_t)(-lo > hi ? -lo : hi);
}

/* 1 when every value of magnitude up to `bound`, times `multiplier`, plus the rounding of `shift`,
 * fits the 64 bits ethosu_apply_scale computes in (a register setting could otherwise overflow it). */
static inline int ethosu_rescale_fits(uint64_t bound, uint64_t multiplier, int32_t shift) {
  const uint64_t round = shift > 0 ? ((uint64_t)1 << (shift - 1)) + ((uint64_t)1 << 30) : 0u;
  return multiplier == 0u || bound <= ((uint64_t)INT64_MAX - round) / multiplier;
}

/* Record that `what` is not implemented; returns 1. */
int ethosu_refuse(ethosu_npu_t* npu, const char* what);

/* 0 when every element of `f` lies inside its region; else refuses with `what`. */
int ethosu_fm_in_region(ethosu_npu_t* npu, const fmap_t* f, const char* what);

/* The IFM (tile 0) and the OFM from the registers. */
void ethosu_ifm(const ethosu_npu_t* npu, fmap_t* f);
void ethosu_ofm(const ethosu_npu_t* npu, fmap_t* f);
/* IFM2 (tile 0) from the registers, `depth` channels deep (1 when broadcast in depth). */
void ethosu_ifm2(const ethosu_npu_t* npu, int32_t depth, fmap_t* f);

/* Bytes per element of an IFM/IFM2_PRECISION value (activation_precision in bits 2..3) and of an
 * OFM_PRECISION value (bits 1..2): 8, 16 or 32 bits; 0 for the reserved value. */
static inline uint32_t ifm_precision_bytes(uint32_t precision) {
  static const uint8_t bytes[4] = {1, 2, 4, 0};
  return bytes[precision >> 2 & 3u];
}
static inline uint32_t ofm_precision_bytes(uint32_t precision) {
  static const uint8_t bytes[4] = {1, 2, 4, 0};
  return bytes[precision >> 1 & 3u];
}

/* The OFM rescale of TOSA's RESCALE (apply_scale_32): (value * multiplier + round) >> shift with
 * round = 2^(shift-1); in the TFL round mode a shift above 31 rounds twice (round +/- 2^30 by the
 * value's sign), in the NATURAL mode once (x.5 towards +infinity). */
int64_t ethosu_apply_scale(int64_t value, int64_t multiplier, int32_t shift, uint32_t round_mode);

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_FMAP_H_ */
