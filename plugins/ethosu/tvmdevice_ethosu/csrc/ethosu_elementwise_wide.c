/*
 * NPU_OP_ELEMENTWISE on 16- and 32-bit feature maps, and the modes CLZ, SHR
 * and SHL: what Vela's int8 SOFTMAX lowering emits (ethosu/regor/compiler/
 * softmax.cpp), and int16 ADD, SUB and MUL.
 *
 * Operands are read at their precision (8, 16 or 32 bits, NHWC or NHCWB16) less
 * their zero points; IFM2 is a feature map, broadcast in H, W or C, or a
 * scalar, with the operand order of NPU_SET_IFM2_BROADCAST, as for 8 bits.
 *
 *   MUL       A * B
 *   ADD, SUB  A +/- B, each scaled as IFM_PRECISION's scale_mode says (ethosu_operand_scale.c)
 *   CLZ       the leading zero bits of the 32-bit A (TOSA CLZ; 32 for 0)
 *   SHL       A << B, in 32 bits (TOSA LOGICAL_LEFT_SHIFT)
 *   SHR       A >> B, arithmetic; NATURAL rounding adds bit B-1 of A (TOSA
 *             ARITHMETIC_RIGHT_SHIFT with round)
 *
 * An elementwise operation with a 32-bit operand or result is shift-only
 * (Vela's ethos_u55_constraints.cpp: "Elementwise supports shift-only if input
 * or output is 32-bit"): MUL, ADD and SUB rescale the result by OFM_SCALE's
 * shift alone, as the 8-bit rescale does with the multiplier 1
 * (ethosu_apply_scale: (v + 2^(shift-1)) >> shift, TFL rounding twice above a
 * shift of 31); the scale register's multiplier is not applied.  With 8- and
 * 16-bit operands and results, MUL, ADD and SUB are rescaled by the OFM scale
 * as on 8 bits (ethosu_apply_scale).  CLZ, SHL and SHR take no scale.
 *
 * Then the OFM's zero point, the clamp and the activation's LUT.  A 32-bit OFM
 * of the clip range OFM_PRECISION saturates to 32 bits (the ACTIVATION_MIN/MAX
 * registers, 16 bits wide, do not clamp it); under the forced int8 clip range
 * it is clamped to int8 and ACTIVATION_MIN/MAX, and the LUT's 256 32-bit
 * entries map that int8 value (the forced int16 range is refused).
 */
#include <stddef.h>

#include "ethosu_elementwise.h"
#include "ethosu_fmap.h"
#include "ethosu_npu.h"
#include "ethosu_operand_scale.h"

/* activation_clip_range (Arm's register interface) */
enum { CLIP_OFM_PRECISION = 0, CLIP_FORCE_INT8 = 3, CLIP_FORCE_INT16 = 5 };

static int binary(uint32_t mode) { return mode != EW_CLZ; }

int ethosu_elementwise_is_wide(const ethosu_npu_t* npu, uint32_t mode) {
  if (mode == EW_CLZ || mode == EW_SHR || mode == EW_SHL) return 1;
  return ifm_precision_bytes(REG(npu, R_IFM_PRECISION)) > 1u ||
         (mode <= EW_MAX && ifm_precision_bytes(REG(npu, R_IFM2_PRECISION)) > 1u) ||
         ofm_precision_bytes(REG(npu, R_OFM_PRECISION)) > 1u;
}

/* 1 when an operand or the result is 32-bit: the operation is then shift-only. */
static int any_32_bit(const fmap_t* in, const fmap_t* in2, const fmap_t* out, int with_ifm2) {
  return in->elem == 4u || (with_ifm2 && in2->elem == 4u) || out->elem == 4u;
}

static int check_fm(ethosu_npu_t* npu, uint32_t precision, const fmap_t* f, const char* name) {
  if (f->elem == 0u || !f->is_signed) return ethosu_refuse(npu, name);
  if ((precision >> 6 & 3u) > 1u) return ethosu_refuse(npu, name);
  return 0;
}

/* Refuses what the model does not implement; 0 when the operation can run.  *table is the LUT
 * slot (-1: none). */
static int check(ethosu_npu_t* npu, uint32_t mode, const fmap_t* in, const fmap_t* in2, const fmap_t* out,
                 int32_t* table) {
  const uint32_t ifm_prec = REG(npu, R_IFM_PRECISION), ofm_prec = REG(npu, R_OFM_PRECISION);
  const uint32_t bc = REG(npu, R_IFM2_BROADCAST), act = REG(npu, R_ACTIVATION);
  const uint32_t round_mode = ofm_prec >> 14 & 3u, clip = act >> 12 & 0xFu;
  const int scaled = mode == EW_MUL || mode == EW_ADD || mode == EW_SUB, wide = any_32_bit(in, in2, out, binary(mode));

  if (!scaled && mode != EW_CLZ && mode != EW_SHR && mode != EW_SHL) {
    return ethosu_refuse(npu, "elementwise mode (LRELU, ABS, MIN or MAX) with a 16- or 32-bit feature map");
  }
  if (check_fm(npu, ifm_prec, in, "IFM_PRECISION (unsigned, or its format)")) return 1;
  if ((ifm_prec >> 8 & 3u) != 0u && mode != EW_ADD && mode != EW_SUB) {
    return ethosu_refuse(npu, "IFM_PRECISION scale_mode (32-bit operand scaling)");
  }
  if (binary(mode) && check_fm(npu, REG(npu, R_IFM2_PRECISION), in2, "IFM2_PRECISION (unsigned, or its format)")) return 1;
  if (check_fm(npu, ofm_prec, out, "OFM_PRECISION (unsigned, or its format)")) return 1;
  if (mode == EW_CLZ && (in->elem != 4u || out->elem != 4u)) return ethosu_refuse(npu, "IFM_PRECISION (CLZ not on 32 bits)");
  if (mode == EW_SHL && (in->elem != 4u || in2->elem != 4u || out->elem != 4u)) {
    return ethosu_refuse(npu, "IFM_PRECISION (SHL not on 32 bits)");
  }
  if (mode == EW_SHR && (in->elem != 4u || in2->elem != 4u)) return ethosu_refuse(npu, "IFM_PRECISION (SHR not on 32 bits)");
  if (scaled) {
    if ((ofm_prec >> 8 & 1u) != 1u) return ethosu_refuse(npu, "OFM_PRECISION scale_mode (not global)");
    if (!npu->set32[R1_OFM_SCALE]) return ethosu_refuse(npu, "OFM_SCALE (never set)");
    if (round_mode != ETHOSU_ROUND_TFL && round_mode != ETHOSU_ROUND_NATURAL) {
      return ethosu_refuse(npu, "OFM_PRECISION round_mode (TRUNCATE)");
    }
  } else {
    if ((ofm_prec >> 8 & 1u) != 0u) return ethosu_refuse(npu, "OFM_PRECISION scale_mode (CLZ/SHL/SHR with a global scale)");
    if (mode == EW_SHR && round_mode != ETHOSU_ROUND_NATURAL) {
      return ethosu_refuse(npu, "OFM_PRECISION round_mode (SHR not NATURAL)");
    }
  }
  if ((mode == EW_ADD || mode == EW_SUB) && ethosu_operand_scale_check(npu)) return 1;
  if (scaled && ethosu_elementwise_rescale_check(npu, mode, in, in2, bc, wide ? 1u : npu->reg32[R1_OFM_SCALE])) {
    return 1;
  }
  if (REG(npu, R_IFM_UPSCALE) != 0u) return ethosu_refuse(npu, "IFM_UPSCALE");
  if (out->elem == 4u) {
    if (clip != CLIP_OFM_PRECISION && clip != CLIP_FORCE_INT8) return ethosu_refuse(npu, "ACTIVATION clip range (32-bit OFM)");
    if ((act & 0xFFFu) != 0u && clip != CLIP_FORCE_INT8) return ethosu_refuse(npu, "ACTIVATION (a LUT without the int8 clip)");
    if ((act & 0xFFFu) == 0u && clip != CLIP_OFM_PRECISION) return ethosu_refuse(npu, "ACTIVATION clip range (forced, no LUT)");
  } else if (clip != CLIP_OFM_PRECISION) {
    return ethosu_refuse(npu, "ACTIVATION clip range");
  }
  if (ethosu_lut_check(npu, table)) return 1;
  if (*table >= 0 && out->elem == 2u) return ethosu_refuse(npu, "ACTIVATION (a LUT on 16 bits)");
  if (*table >= 0 && out->elem == 4u) { /* 256 32-bit entries: four slots */
    if (*table > 4 || (npu->lut_loaded >> *table & 0xFu) != 0xFu) {
      return ethosu_refuse(npu, "ACTIVATION (a 32-bit LUT in slots no DMA loaded)");
    }
  }
  return ethosu_elementwise_shapes(npu, in, in2, out, bc, binary(mode));
}

static int64_t clz32(int64_t a) {
  uint32_t v = (uint32_t)a;
  int64_t n = 0;
  if (v == 0u) return 32;
  while (!(v & 0x80000000u)) {
    v <<= 1;
    n++;
  }
  return n;
}

/* TOSA requires a shift amount in 0..31; outside it the model clamps the amount into that range. */
static int64_t shift_amount(int64_t b) { return b < 0 ? 0 : b > 31 ? 31 : b; }

static int64_t lut32(const ethosu_npu_t* npu, int32_t table, int64_t v) {
  const uint8_t* e = npu->lut + (uint32_t)table * ETHOSU_LUT_SLOT_BYTES + 4u * (uint32_t)(v + 128);
  return (int64_t)(int32_t)((uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24);
}

int32_t ethosu_op_elementwise_wide(ethosu_npu_t* npu, uint32_t mode, int execute) {
  const uint32_t bc = REG(npu, R_IFM2_BROADCAST), act = REG(npu, R_ACTIVATION);
  const int32_t act_min = sext16(REG(npu, R_ACTIVATION_MIN)), act_max = sext16(REG(npu, R_ACTIVATION_MAX));
  const int64_t scale = npu->reg32[R1_OFM_SCALE];
  const int32_t shift = npu->hi32[R1_OFM_SCALE] & 0x3F;
  const uint32_t round_mode = REG(npu, R_OFM_PRECISION) >> 14 & 3u;
  fmap_t in, in2, out;
  int64_t lo, hi;
  int wide;
  int32_t y, x, c, table;

  npu->unsupported = NULL;
  ethosu_ifm(npu, &in);
  ethosu_ofm(npu, &out);
  ethosu_ifm2(npu, BROADCAST_C(bc) ? 1 : out.c, &in2);
  if (check(npu, mode, &in, &in2, &out, &table)) return 1;
  if (!execute) return 0;

  wide = any_32_bit(&in, &in2, &out, binary(mode));
  lo = fm_min(&out); /* a 32-bit OFM of the clip range OFM_PRECISION: saturated to 32 bits */
  hi = fm_max(&out);
  if ((act >> 12 & 0xFu) == CLIP_FORCE_INT8) {
    lo = -128;
    hi = 127;
  }
  if (out.elem != 4u || (act >> 12 & 0xFu) == CLIP_FORCE_INT8) {
    if (act_min > lo) lo = act_min;
    if (act_max < hi) hi = act_max;
  }
  for (y = 0; y < out.h; y++) {
    for (x = 0; x < out.w; x++) {
      for (c = 0; c < out.c; c++) {
        const int64_t first = fm_read(&in, y, x, c) - in.zero_point;
        int64_t second = 0, a, b, r, v;
        if (binary(mode)) {
          if (BROADCAST_SCALAR(bc)) {
            second = (int64_t)sext16(REG(npu, R_IFM2_SCALAR)) - in2.zero_point;
          } else {
            second = fm_read(&in2, BROADCAST_H(bc) ? 0 : y, BROADCAST_W(bc) ? 0 : x, BROADCAST_C(bc) ? 0 : c) -
                     in2.zero_point;
          }
        }
        a = OPERAND_ORDER_A(bc) ? second : first;
        b = OPERAND_ORDER_A(bc) ? first : second;
        switch (mode) {
          case EW_MUL: r = a * b; break;
          case EW_ADD: r = ethosu_operand_scale_combine(npu, a, b, 0); break;
          case EW_SUB: r = ethosu_operand_scale_combine(npu, a, b, 1); break;
          case EW_CLZ: r = clz32(a); break;
          case EW_SHL: r = (int64_t)(int32_t)((uint32_t)a << shift_amount(b)); break;
          default: { /* SHR, NATURAL rounding */
            const int64_t s = shift_amount(b);
            r = s > 0 ? (a + ((int64_t)1 << (s - 1))) >> s : a;
          }
        }
        if (mode == EW_MUL || mode == EW_ADD || mode == EW_SUB) {
          r = ethosu_apply_scale(r, wide ? 1 : scale, shift, round_mode);
        }
        v = r + out.zero_point;
        if (v < lo) v = lo;
        if (v > hi) v = hi;
        if (table >= 0) v = out.elem == 4u ? lut32(npu, table, v) : ethosu_lut_apply(npu, table, (int32_t)v);
        fm_write(&out, npu->region[out.region], y, x, c, v);
      }
    }
  }
  return 0;
}
