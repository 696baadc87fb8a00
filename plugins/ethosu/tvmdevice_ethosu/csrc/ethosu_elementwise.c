/*
 * NPU_OP_ELEMENTWISE, the binary modes MUL, ADD, SUB, MIN and MAX on signed
 * 8-bit feature maps: IFM2 from a feature map (broadcast in H, W or C where
 * NPU_SET_IFM2_BROADCAST says) or a scalar (NPU_SET_IFM2_SCALAR), operand A
 * being the IFM unless the broadcast register's operand order puts IFM2
 * first (Vela does when the broadcast or scalar operand is the operator's
 * first input).
 *
 * Operands are read less their zero points.  MUL multiplies them; ADD and SUB
 * first scale each operand as IFM_PRECISION's scale_mode says
 * (ethosu_operand_scale.c); both results are rescaled by the OFM's global
 * scale.  The activation's LUT, when it names one, maps the result
 * (ethosu_lut.c).  MIN and MAX take no scale: Vela emits the unit OFM scale
 * for them and places them on the NPU only when the three quantizations agree.
 */
#include <stddef.h>

#include "ethosu_elementwise.h"
#include "ethosu_fmap.h"
#include "ethosu_npu.h"
#include "ethosu_operand_scale.h"

static int not_s8(uint32_t precision) { return (precision & 1u) != 1u || (precision >> 2 & 3u) != 0u; }

/* Refuses what the model does not implement; 0 when the operation can run. */
static int check(ethosu_npu_t* npu, uint32_t mode, const fmap_t* in, const fmap_t* in2, const fmap_t* out,
                 int32_t* table) {
  const uint32_t ifm_prec = REG(npu, R_IFM_PRECISION), ofm_prec = REG(npu, R_OFM_PRECISION);
  const uint32_t ifm2_prec = REG(npu, R_IFM2_PRECISION), bc = REG(npu, R_IFM2_BROADCAST);
  const uint32_t act = REG(npu, R_ACTIVATION), round_mode = ofm_prec >> 14 & 3u;
  const int scaled = mode == EW_MUL || mode == EW_ADD || mode == EW_SUB;

  if (mode > EW_MAX) return ethosu_refuse(npu, "elementwise mode (LRELU, ABS, CLZ, SHR or SHL)");
  if (not_s8(ifm_prec)) return ethosu_refuse(npu, "IFM_PRECISION (not signed 8-bit)");
  if ((ifm_prec >> 6 & 3u) > 1u) return ethosu_refuse(npu, "IFM_PRECISION format");
  if (mode != EW_ADD && mode != EW_SUB && (ifm_prec >> 8 & 3u) != 0u) {
    return ethosu_refuse(npu, "IFM_PRECISION scale_mode (32-bit operand scaling)");
  }
  if (not_s8(ifm2_prec)) return ethosu_refuse(npu, "IFM2_PRECISION (not signed 8-bit)");
  if ((ifm2_prec >> 6 & 3u) > 1u) return ethosu_refuse(npu, "IFM2_PRECISION format");
  if ((ofm_prec & 1u) != 1u || (ofm_prec >> 1 & 3u) != 0u) return ethosu_refuse(npu, "OFM_PRECISION (not signed 8-bit)");
  if ((ofm_prec >> 6 & 3u) > 1u) return ethosu_refuse(npu, "OFM_PRECISION format");
  if (round_mode != ETHOSU_ROUND_TFL && round_mode != ETHOSU_ROUND_NATURAL) {
    return ethosu_refuse(npu, "OFM_PRECISION round_mode (TRUNCATE)");
  }
  if (!npu->set32[R1_OFM_SCALE]) return ethosu_refuse(npu, "OFM_SCALE (never set)");
  if (scaled && (ofm_prec >> 8 & 1u) != 1u) return ethosu_refuse(npu, "OFM_PRECISION scale_mode (not global)");
  if (!scaled && (npu->reg32[R1_OFM_SCALE] != 1u || (npu->hi32[R1_OFM_SCALE] & 0x3Fu) != 0u)) {
    return ethosu_refuse(npu, "OFM_SCALE (MIN/MAX with a scale)");
  }
  if ((mode == EW_ADD || mode == EW_SUB) && ethosu_operand_scale_check(npu)) return 1;
  if (scaled && ethosu_elementwise_rescale_check(npu, mode, in, in2, bc, npu->reg32[R1_OFM_SCALE])) return 1;
  if (REG(npu, R_IFM_UPSCALE) != 0u) return ethosu_refuse(npu, "IFM_UPSCALE");
  if (ethosu_lut_check(npu, table)) return 1;
  if ((act >> 12 & 0xFu) != 0u) return ethosu_refuse(npu, "ACTIVATION clip range");
  return ethosu_elementwise_shapes(npu, in, in2, out, bc, 1);
}

int ethosu_elementwise_rescale_check(ethosu_npu_t* npu, uint32_t mode, const fmap_t* in, const fmap_t* in2,
                                     uint32_t bc, uint64_t multiplier) {
  /* a scalar IFM2 is a sign-extended 16-bit register less a zero point: at most 2^16 from it */
  const uint64_t m1 = fm_magnitude(in), m2 = BROADCAST_SCALAR(bc) ? 0x10000u : fm_magnitude(in2);
  const uint64_t bound = mode == EW_MUL ? m1 * m2 : ethosu_operand_scale_bound(npu, m1, m2);
  const int32_t shift = (int32_t)(npu->hi32[R1_OFM_SCALE] & 0x3Fu);
  return ethosu_rescale_fits(bound, multiplier, shift) ? 0 : ethosu_refuse(npu, "OFM_SCALE (overflows 64 bits)");
}

int ethosu_elementwise_shapes(ethosu_npu_t* npu, const fmap_t* in, const fmap_t* in2, const fmap_t* out,
                              uint32_t bc, int with_ifm2) {
  if (REG(npu, R_OFM_HEIGHT0_M1) != REG(npu, R_OFM_HEIGHT_M1) || REG(npu, R_OFM_WIDTH0_M1) != REG(npu, R_OFM_WIDTH_M1)) {
    return ethosu_refuse(npu, "OFM tiles (OFM_HEIGHT0_M1/OFM_WIDTH0_M1 short of the OFM)");
  }
  if (in->h < out->h || in->w < out->w) return ethosu_refuse(npu, "IFM tiles (reads beyond IFM tile 0)");
  if (in->c != out->c) return ethosu_refuse(npu, "IFM_DEPTH_M1 (not the OFM's)");
  if (with_ifm2 && !BROADCAST_SCALAR(bc)) {
    if (BROADCAST_H(bc) ? in2->h != 1 : in2->h < out->h) return ethosu_refuse(npu, "IFM2_HEIGHT0_M1 (IFM2 tiles or broadcast)");
    if (BROADCAST_W(bc) ? in2->w != 1 : in2->w < out->w) return ethosu_refuse(npu, "IFM2_WIDTH0_M1 (IFM2 tiles or broadcast)");
    if (ethosu_fm_in_region(npu, in2, "IFM2 addresses (outside the region)")) return 1;
  }
  if (ethosu_fm_in_region(npu, in, "IFM addresses (outside the region)")) return 1;
  if (ethosu_fm_in_region(npu, out, "OFM addresses (outside the region)")) return 1;
  if (npu->read_only_regions >> out->region & 1u) return ethosu_refuse(npu, "OFM_REGION (read-only)");
  return 0;
}

int32_t ethosu_op_elementwise(ethosu_npu_t* npu, uint32_t mode, int execute) {
  const uint32_t bc = REG(npu, R_IFM2_BROADCAST), round_mode = REG(npu, R_OFM_PRECISION) >> 14 & 3u;
  const int32_t act_min = sext16(REG(npu, R_ACTIVATION_MIN)), act_max = sext16(REG(npu, R_ACTIVATION_MAX));
  const int64_t scale = npu->reg32[R1_OFM_SCALE];
  const int32_t shift = npu->hi32[R1_OFM_SCALE] & 0x3F;
  fmap_t in, in2, out;
  int32_t y, x, c, table;

  npu->unsupported = NULL;
  /* 16- and 32-bit feature maps, CLZ, SHL, SHR: ethosu_elementwise_wide.c */
  if (ethosu_elementwise_is_wide(npu, mode)) return ethosu_op_elementwise_wide(npu, mode, execute);
  ethosu_ifm(npu, &in);
  ethosu_ofm(npu, &out);
  ethosu_ifm2(npu, BROADCAST_C(bc) ? 1 : out.c, &in2);
  if (check(npu, mode, &in, &in2, &out, &table)) return 1;
  if (!execute) return 0;

  for (y = 0; y < out.h; y++) {
    for (x = 0; x < out.w; x++) {
      for (c = 0; c < out.c; c++) {
        const int64_t first = (int64_t)in.data[fm_offset(&in, y, x, c)] - in.zero_point;
        int64_t second, a, b, r, v;
        if (BROADCAST_SCALAR(bc)) {
          second = (int64_t)sext16(REG(npu, R_IFM2_SCALAR)) - in2.zero_point;
        } else {
          const int32_t y2 = BROADCAST_H(bc) ? 0 : y, x2 = BROADCAST_W(bc) ? 0 : x, c2 = BROADCAST_C(bc) ? 0 : c;
          second = (int64_t)in2.data[fm_offset(&in2, y2, x2, c2)] - in2.zero_point;
        }
        a = OPERAND_ORDER_A(bc) ? second : first;
        b = OPERAND_ORDER_A(bc) ? first : second;
        switch (mode) {
          case EW_MUL: r = ethosu_apply_scale(a * b, scale, shift, round_mode); break;
          case EW_ADD: r = ethosu_apply_scale(ethosu_operand_scale_combine(npu, a, b, 0), scale, shift, round_mode); break;
          case EW_SUB: r = ethosu_apply_scale(ethosu_operand_scale_combine(npu, a, b, 1), scale, shift, round_mode); break;
          case EW_MIN: r = a < b ? a : b; break;
          default: r = a > b ? a : b; break;
        }
        v = r + out.zero_point;
        if (v < act_min) v = act_min;
        if (v > act_max) v = act_max;
        if (v < -128) v = -128;
        if (v > 127) v = 127;
        if (table >= 0) v = ethosu_lut_apply(npu, table, (int32_t)v);
        ((int8_t*)npu->region[out.region])[fm_offset(&out, y, x, c)] = (int8_t)v;
      }
    }
  }
  return 0;
}
