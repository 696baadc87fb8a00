/* The operand scaling of ADD and SUB (ethosu_operand_scale.h). */
#include "ethosu_operand_scale.h"

#include "ethosu_fmap.h"

/* IFM_PRECISION's scale_mode (bits 8..9) and round_mode (bits 14..15). */
enum { SCALE_OPA_OPB_16 = 0, SCALE_OPA_32 = 1, SCALE_OPB_32 = 2 };
#define SCALE_MODE(npu) (REG(npu, R_IFM_PRECISION) >> 8 & 3u)
#define IFM_ROUND_MODE(npu) (REG(npu, R_IFM_PRECISION) >> 14 & 3u)

/* Vela folds TFLite's left shift of ADD/SUB operands into the 32-bit operand scale: the scaled
 * operand is x * 2^L * s / (2 * max s), the other x * 2^L / 2, with L = 20 for 8-bit feature maps
 * and 15 for 16-bit ones (the IFM precision's bits 2..3: 0 for 8 bits, 1 for 16). */
static int32_t input_shift(const ethosu_npu_t* npu) { return (REG(npu, R_IFM_PRECISION) >> 2 & 3u) == 1u ? 15 : 20; }

int ethosu_operand_scale_check(ethosu_npu_t* npu) {
  const uint32_t mode = SCALE_MODE(npu);
  if (!npu->set32[R1_OPA_SCALE] || !npu->set32[R1_OPB_SCALE]) return ethosu_refuse(npu, "OPA_SCALE/OPB_SCALE (never set)");
  if (mode == SCALE_OPA_OPB_16) {
    if (npu->hi32[R1_OPA_SCALE] != 0u || npu->reg32[R1_OPA_SCALE] > 0xFFFFu || npu->reg32[R1_OPB_SCALE] > 0xFFFFu) {
      return ethosu_refuse(npu, "OPA_SCALE/OPB_SCALE (not 16-bit)");
    }
    if (npu->reg32[R1_OPA_SCALE] != npu->reg32[R1_OPB_SCALE]) return ethosu_refuse(npu, "OPA_SCALE/OPB_SCALE (unequal)");
    return 0;
  }
  if (mode != SCALE_OPA_32 && mode != SCALE_OPB_32) return ethosu_refuse(npu, "IFM_PRECISION scale_mode (reserved value)");
  if (IFM_ROUND_MODE(npu) != ETHOSU_ROUND_TFL) return ethosu_refuse(npu, "IFM_PRECISION round_mode (32-bit operand scaling not TFL)");
  if ((REG(npu, R_IFM_PRECISION) >> 2 & 3u) > 1u) return ethosu_refuse(npu, "IFM_PRECISION (32-bit operand scaling of 32 bits)");
  /* the rescale of a smaller input scale by the larger: at most 2^(L-1), so a shift of at least 31 - L */
  if ((int32_t)(npu->hi32[R1_OPA_SCALE] & 0x3Fu) < 31 - input_shift(npu)) {
    return ethosu_refuse(npu, "OPA_SCALE shift (below 31 less the input shift)");
  }
  return 0;
}

/* x * scale >> shift in the TFL round mode, the first rounding at bit 31 - L: TFLite's rescale (a
 * rounding doubling high multiply, then a rounding right shift) of x * 2^L, written as TOSA writes
 * its double rounding (apply_scale_32), moved down by L bits. */
static int64_t rescale_operand(int64_t x, int64_t scale, int32_t shift, int32_t l) {
  int64_t round = (int64_t)1 << (shift - 1);
  if (shift > 31 - l) round += x >= 0 ? ((int64_t)1 << (30 - l)) : -((int64_t)1 << (30 - l));
  return (x * scale + round) >> shift;
}

uint64_t ethosu_operand_scale_bound(const ethosu_npu_t* npu, uint64_t a, uint64_t b) {
  if (SCALE_MODE(npu) == SCALE_OPA_OPB_16) return a * npu->reg32[R1_OPA_SCALE] + b * npu->reg32[R1_OPB_SCALE];
  return (a + b + 2u) << (input_shift(npu) - 1); /* each operand at most |x| * 2^(L-1), and its rounding */
}

int64_t ethosu_operand_scale_combine(const ethosu_npu_t* npu, int64_t a, int64_t b, int subtract) {
  const uint32_t mode = SCALE_MODE(npu);
  int64_t sa, sb;
  if (mode == SCALE_OPA_OPB_16) {
    sa = a * (int64_t)npu->reg32[R1_OPA_SCALE];
    sb = b * (int64_t)npu->reg32[R1_OPB_SCALE];
  } else {
    const int64_t scale = npu->reg32[R1_OPA_SCALE];
    const int32_t shift = (int32_t)(npu->hi32[R1_OPA_SCALE] & 0x3Fu);
    const int32_t l = input_shift(npu);
    sa = mode == SCALE_OPA_32 ? rescale_operand(a, scale, shift, l) : a * ((int64_t)1 << (l - 1));
    sb = mode == SCALE_OPB_32 ? rescale_operand(b, scale, shift, l) : b * ((int64_t)1 << (l - 1));
  }
  return subtract ? sa - sb : sa + sb;
}
