/*
 * NPU_OP_POOL: max and average pooling over each channel's window, with the
 * OFM's global scale (NPU_SET_OFM_SCALE: a 32-bit scale, the shift in its
 * parameter), then the activation's LUT when it names one (ethosu_lut.c).  The average is the window's sum rescaled: Vela folds the
 * division into the scale (1/count, rounded) when no window crosses the
 * edge.  Pooling over padding: ethosu_pool_padded.c.
 */
#include <stddef.h>

#include "ethosu_fmap.h"
#include "ethosu_npu.h"
#include "ethosu_pool_padded.h"

enum { POOL_MAX = 0, POOL_AVERAGE = 1, POOL_REDUCE_SUM = 2 };

/* REDUCE_SUM (Vela's SOFTMAX sums the exponentials over depth): a 1x1 kernel, the sum of
 * (ifm - ifm_zero_point) over every IFM channel into the OFM's one channel, 8- or 32-bit IFM,
 * 32-bit OFM with the unit scale and the clip range OFM_PRECISION (saturated to 32 bits). */
static int reduce_sum_check(ethosu_npu_t* npu, const fmap_t* in, const fmap_t* out, int32_t kh, int32_t kw) {
  const uint32_t act = REG(npu, R_ACTIVATION);
  if (in->elem != 1u && in->elem != 4u) return ethosu_refuse(npu, "IFM_PRECISION (REDUCE_SUM of 16 bits)");
  if (out->elem != 4u || !out->is_signed) return ethosu_refuse(npu, "OFM_PRECISION (REDUCE_SUM not to signed 32 bits)");
  if (kh != 1 || kw != 1) return ethosu_refuse(npu, "KERNEL_HEIGHT_M1/KERNEL_WIDTH_M1 (REDUCE_SUM over a window)");
  if (out->c != 1) return ethosu_refuse(npu, "OFM_DEPTH_M1 (REDUCE_SUM to more than one channel)");
  if (npu->reg32[R1_OFM_SCALE] != 1u || (npu->hi32[R1_OFM_SCALE] & 0x3Fu) != 0u) {
    return ethosu_refuse(npu, "OFM_SCALE (REDUCE_SUM with a scale)");
  }
  if (act != 0u) return ethosu_refuse(npu, "ACTIVATION (REDUCE_SUM with an activation)");
  return 0;
}

static void reduce_sum(ethosu_npu_t* npu, const fmap_t* in, const fmap_t* out) {
  int32_t y, x, c;
  for (y = 0; y < out->h; y++) {
    for (x = 0; x < out->w; x++) {
      int64_t acc = 0;
      for (c = 0; c < in->c; c++) acc += fm_read(in, y, x, c) - in->zero_point;
      acc += out->zero_point;
      if (acc < fm_min(out)) acc = fm_min(out);
      if (acc > fm_max(out)) acc = fm_max(out);
      fm_write(out, npu->region[out->region], y, x, 0, acc);
    }
  }
  npu->macs += (uint64_t)out->h * (uint64_t)out->w * (uint64_t)in->c;
}

int32_t ethosu_op_pool(ethosu_npu_t* npu, uint32_t mode, int execute) {
  const uint32_t ifm_prec = REG(npu, R_IFM_PRECISION), ofm_prec = REG(npu, R_OFM_PRECISION);
  const uint32_t kstride = REG(npu, R_KERNEL_STRIDE), act = REG(npu, R_ACTIVATION);
  const uint32_t round_mode = ofm_prec >> 14 & 3u;
  const int32_t stride_x = 1 + (int32_t)((kstride & 1u) | ((kstride >> 6 & 1u) << 1));
  const int32_t stride_y = 1 + (int32_t)((kstride >> 1 & 1u) | ((kstride >> 9 & 1u) << 1));
  const int32_t kh = REG(npu, R_KERNEL_HEIGHT_M1) + 1, kw = REG(npu, R_KERNEL_WIDTH_M1) + 1;
  const int32_t act_min = sext16(REG(npu, R_ACTIVATION_MIN)), act_max = sext16(REG(npu, R_ACTIVATION_MAX));
  const int64_t scale = npu->reg32[R1_OFM_SCALE];
  const int32_t shift = npu->hi32[R1_OFM_SCALE] & 0x3F;
  fmap_t in, out;
  int32_t oy, ox, c, table;

  npu->unsupported = NULL;
  if (mode != POOL_MAX && mode != POOL_AVERAGE && mode != POOL_REDUCE_SUM) return ethosu_refuse(npu, "pooling mode");
  /* max and average: signed 8- or 16-bit, the OFM of the IFM's precision or 32-bit (saturated to 32
   * bits, ACTIVATION_MIN/MAX not applied, as for elementwise); REDUCE_SUM: reduce_sum_check */
  if ((ifm_prec & 1u) != 1u || ((ifm_prec >> 2 & 3u) > 1u && mode != POOL_REDUCE_SUM)) {
    return ethosu_refuse(npu, "IFM_PRECISION (not signed 8- or 16-bit)");
  }
  if ((ifm_prec >> 6 & 3u) > 1u) return ethosu_refuse(npu, "IFM_PRECISION format");
  if ((ofm_prec & 1u) != 1u ||
      (mode != POOL_REDUCE_SUM && ifm_precision_bytes(ifm_prec) != ofm_precision_bytes(ofm_prec) &&
       ofm_precision_bytes(ofm_prec) != 4u)) {
    return ethosu_refuse(npu, "OFM_PRECISION (not signed, nor the IFM's or 32-bit)");
  }
  if ((ofm_prec >> 6 & 3u) > 1u) return ethosu_refuse(npu, "OFM_PRECISION format");
  if ((ofm_prec >> 8 & 1u) != 1u) return ethosu_refuse(npu, "OFM_PRECISION scale_mode (not global)");
  if (round_mode != ETHOSU_ROUND_TFL && round_mode != ETHOSU_ROUND_NATURAL) {
    return ethosu_refuse(npu, "OFM_PRECISION round_mode (TRUNCATE)");
  }
  if (!npu->set32[R1_OFM_SCALE]) return ethosu_refuse(npu, "OFM_SCALE (never set)");
  if (REG(npu, R_IFM_UPSCALE) != 0u) return ethosu_refuse(npu, "IFM_UPSCALE");
  if (ethosu_lut_check(npu, &table)) return 1;
  if (table >= 0 && ofm_precision_bytes(ofm_prec) != 1u) return ethosu_refuse(npu, "ACTIVATION (a LUT on 16 or 32 bits)");
  if ((act >> 12 & 0xFu) != 0u) return ethosu_refuse(npu, "ACTIVATION clip range");
  if ((kstride >> 3 & 3u) != 0u) return ethosu_refuse(npu, "KERNEL_STRIDE dilation (pooling)");
  if (ethosu_pool_is_padded(npu) &&
      (mode == POOL_REDUCE_SUM || ifm_precision_bytes(ifm_prec) != 1u || ofm_precision_bytes(ofm_prec) != 1u)) {
    return ethosu_refuse(npu, "IFM_PAD (padding with REDUCE_SUM or a 16- or 32-bit feature map)");
  }
  if (ethosu_pool_is_padded(npu)) return ethosu_pool_padded(npu, mode == POOL_AVERAGE, table, execute);
  ethosu_ifm(npu, &in);
  ethosu_ofm(npu, &out);
  if (REG(npu, R_OFM_HEIGHT0_M1) != REG(npu, R_OFM_HEIGHT_M1) || REG(npu, R_OFM_WIDTH0_M1) != REG(npu, R_OFM_WIDTH_M1)) {
    return ethosu_refuse(npu, "OFM tiles (OFM_HEIGHT0_M1/OFM_WIDTH0_M1 short of the OFM)");
  }
  if ((out.h - 1) * stride_y + kh > in.h || (out.w - 1) * stride_x + kw > in.w) {
    return ethosu_refuse(npu, "IFM tiles (reads beyond IFM tile 0)");
  }
  if (mode == POOL_REDUCE_SUM && reduce_sum_check(npu, &in, &out, kh, kw)) return 1;
  if (mode != POOL_REDUCE_SUM && in.c != out.c) return ethosu_refuse(npu, "IFM_DEPTH_M1 (not the OFM's)");
  if (ethosu_fm_in_region(npu, &in, "IFM addresses (outside the region)")) return 1;
  if (ethosu_fm_in_region(npu, &out, "OFM addresses (outside the region)")) return 1;
  if (npu->read_only_regions >> out.region & 1u) return ethosu_refuse(npu, "OFM_REGION (read-only)");
  if (!ethosu_rescale_fits((uint64_t)kh * (uint64_t)kw * fm_magnitude(&in), npu->reg32[R1_OFM_SCALE], shift)) {
    return ethosu_refuse(npu, "OFM_SCALE (overflows 64 bits)");
  }
  if (!execute) return 0;
  if (mode == POOL_REDUCE_SUM) {
    reduce_sum(npu, &in, &out);
    return 0;
  }

  for (oy = 0; oy < out.h; oy++) {
    for (ox = 0; ox < out.w; ox++) {
      for (c = 0; c < out.c; c++) {
        int64_t acc = mode == POOL_MAX ? INT64_MIN : 0, v;
        int32_t ky, kx;
        for (ky = 0; ky < kh; ky++) {
          for (kx = 0; kx < kw; kx++) {
            const int64_t x = fm_read(&in, oy * stride_y + ky, ox * stride_x + kx, c) - in.zero_point;
            if (mode == POOL_MAX) {
              if (x > acc) acc = x;
            } else {
              acc += x;
            }
          }
        }
        v = ethosu_apply_scale(acc, scale, shift, round_mode) + out.zero_point;
        if (out.elem != 4u && v < act_min) v = act_min;
        if (out.elem != 4u && v > act_max) v = act_max;
        if (v < fm_min(&out)) v = fm_min(&out);
        if (v > fm_max(&out)) v = fm_max(&out);
        if (table >= 0) v = ethosu_lut_apply(npu, table, (int32_t)v);
        fm_write(&out, npu->region[out.region], oy, ox, c, v);
      }
    }
  }
  /* one multiply-accumulate per window element, as Vela counts a pooling's MACs */
  npu->macs += (uint64_t)out.h * (uint64_t)out.w * (uint64_t)out.c * (uint64_t)kh * (uint64_t)kw;
  return 0;
}
