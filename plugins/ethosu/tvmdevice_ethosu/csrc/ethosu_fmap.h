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
  const int8_t* data; /* execute mode: the region's memory */
} fmap_t;

/* An 8-bit element's offset in its region (Vela's register_command_stream_util.get_address). */
static inline uint64_t fm_offset(const fmap_t* f, int32_t y, int32_t x, int32_t c) {
  uint64_t off = f->base + (uint64_t)y * f->stride_y + (uint64_t)x * f->stride_x;
  if (f->nhcwb16) return off + (uint64_t)(c / 16) * f->stride_c + (uint64_t)(c % 16);
  return off + (uint64_t)c;
}

/* Record that `what` is not implemented; returns 1. */
int ethosu_refuse(ethosu_npu_t* npu, const char* what);

/* 0 when every element of `f` lies inside its region; else refuses with `what`. */
int ethosu_fm_in_region(ethosu_npu_t* npu, const fmap_t* f, const char* what);

/* The IFM (tile 0) and the OFM from the registers. */
void ethosu_ifm(const ethosu_npu_t* npu, fmap_t* f);
void ethosu_ofm(const ethosu_npu_t* npu, fmap_t* f);

/* The OFM rescale of TOSA's RESCALE (apply_scale_32): (value * multiplier + round) >> shift with
 * round = 2^(shift-1); in the TFL round mode a shift above 31 rounds twice (round +/- 2^30 by the
 * value's sign), in the NATURAL mode once (x.5 towards +infinity). */
int64_t ethosu_apply_scale(int64_t value, int64_t multiplier, int32_t shift, uint32_t round_mode);

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_FMAP_H_ */
