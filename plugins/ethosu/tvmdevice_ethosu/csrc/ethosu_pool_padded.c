/* NPU_OP_POOL over padding (ethosu_pool_padded.h). */
#include "ethosu_pool_padded.h"

#include "ethosu_fmap.h"

/* The largest padded average window: Vela places a padded AVERAGE_POOL_2D only up to 8x8 (its
 * supported-operator constraints, TFLite and TOSA alike). */
#define MAX_PADDED_AVERAGE_KERNEL 8

int ethosu_pool_is_padded(const ethosu_npu_t* npu) {
  return REG(npu, R_IFM_PAD_TOP) || REG(npu, R_IFM_PAD_LEFT) || REG(npu, R_IFM_PAD_BOTTOM) || REG(npu, R_IFM_PAD_RIGHT);
}

/* TOSA's reciprocal_scale: 1/count as a multiplier in [2^30, 2^31) and a shift, for 2^(k-1) < count <= 2^k. */
static void reciprocal_scale(int32_t count, int64_t* multiplier, int32_t* shift) {
  int32_t k = 0;
  while (((int64_t)1 << k) < count) k++;
  *multiplier = ((((int64_t)1 << 30) + 1) << k) / count;
  *shift = 30 + k;
}

int32_t ethosu_pool_padded(ethosu_npu_t* npu, int average, int32_t table, int execute) {
  const uint32_t kstride = REG(npu, R_KERNEL_STRIDE), round_mode = REG(npu, R_OFM_PRECISION) >> 14 & 3u;
  const int32_t stride_x = 1 + (int32_t)((kstride & 1u) | ((kstride >> 6 & 1u) << 1));
  const int32_t stride_y = 1 + (int32_t)((kstride >> 1 & 1u) | ((kstride >> 9 & 1u) << 1));
  const int32_t kh = REG(npu, R_KERNEL_HEIGHT_M1) + 1, kw = REG(npu, R_KERNEL_WIDTH_M1) + 1;
  const int32_t top = REG(npu, R_IFM_PAD_TOP), left = REG(npu, R_IFM_PAD_LEFT);
  const int32_t bottom = REG(npu, R_IFM_PAD_BOTTOM), right = REG(npu, R_IFM_PAD_RIGHT);
  const int32_t act_min = sext16(REG(npu, R_ACTIVATION_MIN)), act_max = sext16(REG(npu, R_ACTIVATION_MAX));
  const int64_t scale = npu->reg32[R1_OFM_SCALE];
  const int32_t shift = npu->hi32[R1_OFM_SCALE] & 0x3F;
  fmap_t in, out;
  int32_t oy, ox, c;

  ethosu_ifm(npu, &in);
  ethosu_ofm(npu, &out);
  if (average) {
    /* Vela emits a padded average with the unit OFM scale and NATURAL rounding ("padded average-pools
     * use HW-scaling"); how another scale would combine with the division is not defined publicly */
    if (scale != 1 || shift != 0) return ethosu_refuse(npu, "OFM_SCALE (a padded average pool with a scale)");
    if (round_mode != ETHOSU_ROUND_NATURAL) return ethosu_refuse(npu, "OFM_PRECISION round_mode (a padded average pool not NATURAL)");
    if (kh > MAX_PADDED_AVERAGE_KERNEL || kw > MAX_PADDED_AVERAGE_KERNEL) {
      return ethosu_refuse(npu, "KERNEL_HEIGHT_M1/KERNEL_WIDTH_M1 (a padded average pool above 8x8)");
    }
  }
  if (REG(npu, R_OFM_HEIGHT0_M1) != REG(npu, R_OFM_HEIGHT_M1) || REG(npu, R_OFM_WIDTH0_M1) != REG(npu, R_OFM_WIDTH_M1)) {
    return ethosu_refuse(npu, "OFM tiles (OFM_HEIGHT0_M1/OFM_WIDTH0_M1 short of the OFM)");
  }
  if ((out.h - 1) * stride_y + kh > top + in.h + bottom || (out.w - 1) * stride_x + kw > left + in.w + right) {
    return ethosu_refuse(npu, "IFM tiles (reads beyond IFM tile 0 and its padding)");
  }
  if (top >= kh || left >= kw || (out.h - 1) * stride_y - top >= in.h || (out.w - 1) * stride_x - left >= in.w) {
    return ethosu_refuse(npu, "IFM_PAD (a window wholly in the padding)");
  }
  if (in.c != out.c) return ethosu_refuse(npu, "IFM_DEPTH_M1 (not the OFM's)");
  if (ethosu_fm_in_region(npu, &in, "IFM addresses (outside the region)")) return 1;
  if (ethosu_fm_in_region(npu, &out, "OFM addresses (outside the region)")) return 1;
  if (npu->read_only_regions >> out.region & 1u) return ethosu_refuse(npu, "OFM_REGION (read-only)");
  if (!execute) return 0;

  for (oy = 0; oy < out.h; oy++) {
    const int32_t y0 = oy * stride_y - top;
    const int32_t ky0 = y0 < 0 ? -y0 : 0, ky1 = y0 + kh > in.h ? in.h - y0 : kh;
    for (ox = 0; ox < out.w; ox++) {
      const int32_t x0 = ox * stride_x - left;
      const int32_t kx0 = x0 < 0 ? -x0 : 0, kx1 = x0 + kw > in.w ? in.w - x0 : kw;
      for (c = 0; c < out.c; c++) {
        int64_t acc = average ? 0 : INT64_MIN, v;
        int32_t ky, kx;
        for (ky = ky0; ky < ky1; ky++) {
          for (kx = kx0; kx < kx1; kx++) {
            const int64_t x = in.data[fm_offset(&in, y0 + ky, x0 + kx, c)] - in.zero_point;
            if (average) {
              acc += x;
            } else if (x > acc) {
              acc = x;
            }
          }
        }
        if (average) {
          int64_t multiplier;
          int32_t rshift;
          reciprocal_scale((ky1 - ky0) * (kx1 - kx0), &multiplier, &rshift);
          v = ethosu_apply_scale(acc, multiplier, rshift, ETHOSU_ROUND_NATURAL);
        } else {
          v = ethosu_apply_scale(acc, scale, shift, round_mode);
        }
        v += out.zero_point;
        if (v < act_min) v = act_min;
        if (v > act_max) v = act_max;
        if (v < -128) v = -128;
        if (v > 127) v = 127;
        if (table >= 0) v = ethosu_lut_apply(npu, table, (int32_t)v);
        ((int8_t*)npu->region[out.region])[fm_offset(&out, oy, ox, c)] = (int8_t)v;
      }
    }
  }
  /* one multiply-accumulate per window element, padding included, as for an unpadded pooling */
  npu->macs += (uint64_t)out.h * (uint64_t)out.w * (uint64_t)out.c * (uint64_t)kh * (uint64_t)kw;
  return 0;
}
