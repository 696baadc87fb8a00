/* Feature maps, refusals and the rescale shared by the operations (ethosu_fmap.h). */
#include "ethosu_fmap.h"

int ethosu_refuse(ethosu_npu_t* npu, const char* what) {
  npu->unsupported = what;
  return 1;
}

int ethosu_fm_in_region(ethosu_npu_t* npu, const fmap_t* f, const char* what) {
  uint64_t last;
  if (f->region >= ETHOSU_REGIONS) return ethosu_refuse(npu, what);
  if (f->h <= 0 || f->w <= 0 || f->c <= 0) return ethosu_refuse(npu, what);
  if (f->elem == 0u) return ethosu_refuse(npu, what);
  last = fm_offset(f, f->h - 1, f->w - 1, f->c - 1) + f->elem - 1u;
  if (f->nhcwb16) { /* the last brick is written whole */
    const uint64_t brick_end = fm_offset(f, f->h - 1, f->w - 1, ((f->c - 1) / 16) * 16 + 15) + f->elem - 1u;
    if (brick_end > last) last = brick_end;
  }
  if (last >= npu->region_size[f->region]) return ethosu_refuse(npu, what);
  return 0;
}

void ethosu_ifm(const ethosu_npu_t* npu, fmap_t* f) {
  f->region = REG(npu, R_IFM_REGION) & 7u;
  f->base = reg_addr(npu, R1_IFM_BASE0);
  f->stride_x = reg_addr(npu, R1_IFM_STRIDE_X);
  f->stride_y = reg_addr(npu, R1_IFM_STRIDE_Y);
  f->stride_c = reg_addr(npu, R1_IFM_STRIDE_C);
  f->h = REG(npu, R_IFM_HEIGHT0_M1) + 1;
  f->w = REG(npu, R_IFM_WIDTH0_M1) + 1;
  f->c = REG(npu, R_IFM_DEPTH_M1) + 1;
  f->nhcwb16 = (int)(REG(npu, R_IFM_PRECISION) >> 6 & 3u);
  f->zero_point = sext16(REG(npu, R_IFM_ZERO_POINT));
  f->elem = ifm_precision_bytes(REG(npu, R_IFM_PRECISION));
  f->is_signed = (int)(REG(npu, R_IFM_PRECISION) & 1u);
  f->data = (const int8_t*)npu->region[f->region];
}

void ethosu_ofm(const ethosu_npu_t* npu, fmap_t* f) {
  f->region = REG(npu, R_OFM_REGION) & 7u;
  f->base = reg_addr(npu, R1_OFM_BASE0);
  f->stride_x = reg_addr(npu, R1_OFM_STRIDE_X);
  f->stride_y = reg_addr(npu, R1_OFM_STRIDE_Y);
  f->stride_c = reg_addr(npu, R1_OFM_STRIDE_C);
  f->h = REG(npu, R_OFM_HEIGHT_M1) + 1;
  f->w = REG(npu, R_OFM_WIDTH_M1) + 1;
  f->c = REG(npu, R_OFM_DEPTH_M1) + 1;
  f->nhcwb16 = (int)(REG(npu, R_OFM_PRECISION) >> 6 & 3u);
  f->zero_point = sext16(REG(npu, R_OFM_ZERO_POINT));
  f->elem = ofm_precision_bytes(REG(npu, R_OFM_PRECISION));
  f->is_signed = (int)(REG(npu, R_OFM_PRECISION) & 1u);
  f->data = (const int8_t*)npu->region[f->region];
}

void ethosu_ifm2(const ethosu_npu_t* npu, int32_t depth, fmap_t* f) {
  f->region = REG(npu, R_IFM2_REGION) & 7u;
  f->base = reg_addr(npu, R1_IFM2_BASE0);
  f->stride_x = reg_addr(npu, R1_IFM2_STRIDE_X);
  f->stride_y = reg_addr(npu, R1_IFM2_STRIDE_Y);
  f->stride_c = reg_addr(npu, R1_IFM2_STRIDE_C);
  f->h = REG(npu, R_IFM2_HEIGHT0_M1) + 1;
  f->w = REG(npu, R_IFM2_WIDTH0_M1) + 1;
  f->c = depth;
  f->nhcwb16 = (int)(REG(npu, R_IFM2_PRECISION) >> 6 & 3u);
  f->zero_point = sext16(REG(npu, R_IFM2_ZERO_POINT));
  f->elem = ifm_precision_bytes(REG(npu, R_IFM2_PRECISION));
  f->is_signed = (int)(REG(npu, R_IFM2_PRECISION) & 1u);
  f->data = (const int8_t*)npu->region[f->region];
}

int64_t ethosu_apply_scale(int64_t value, int64_t multiplier, int32_t shift, uint32_t round_mode) {
  int64_t round = shift > 0 ? (int64_t)1 << (shift - 1) : 0;
  if (round_mode == ETHOSU_ROUND_TFL && shift > 31) {
    round += value >= 0 ? ((int64_t)1 << 30) : -((int64_t)1 << 30);
  }
  return (value * multiplier + round) >> shift; /* arithmetic shift: the specification's >> on int64 */
}
