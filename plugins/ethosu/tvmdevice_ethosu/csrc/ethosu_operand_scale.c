/* The operand scaling of ADD and SUB (ethosu_operand_scale.h). */
#include "ethosu_operand_scale.h"

#include "ethosu_fmap.h"

/* IFM_PRECISION's scale_mode (bits 8..9) and round_mode (bits 14..15). */
enum { SCALE_OPA_OPB_16 = 0, SCALE_OPA_32 = 1, SCALE_OPB_32 = 2 };
#define SCALE_MODE(npu) (REG(npu, R_IFM_PRECISION) >> 8 & 3u)
#define IFM_ROUND_MODE(npu) (REG(npu, R_IFM_PRECISION) >> 14 & 3u)

/* Vela folds TFLite's left shift of 8-bit ADD/SUB operands into the 32-bit operand scale: the
 * scaled operand is x * 2^20 * s / (2 * max s), the other x * 2^20 / 2. */
#define INPUT_SHIFT 20

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
  /* the rescale of a smaller input scale by the larger: at most 2^19, so a shift of at least 11 */
  if ((npu->hi32[R1_OPA_SCALE] & 0x3Fu) < 31u - INPUT_SHIFT) return ethosu_refuse(npu, "OPA_SCALE shift (below 11)");
  return 0;
}

/* x * scale >> shift in the TFL round mode, the first rounding at bit 31 - INPUT_SHIFT: TFLite's
 * rescale (a rounding doubling high multiply, then a rounding right shift) of x * 2^INPUT_SHIFT,
 * written as TOSA writes its double rounding (apply_scale_32), moved down by INPUT_SHIFT bits. */
static int64_t rescale_operand(int64_t x, int64_t scale, int32_t shift) {
  int64_t round = (int64_t)1 << (shift - 1);
  if (shift > 31 - INPUT_SHIFT) round += x >= 0 ? ((int64_t)1 << (30 - INPUT_SHIFT)) : -((int64_t)1 << (30 - INPUT_SHIFT));
  return (x * scale + round) >> shift;
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
    sa = mode == SCALE_OPA_32 ? rescale_operand(a, scale, shift) : a * ((int64_t)1 << (INPUT_SHIFT - 1));
    sb = mode == SCALE_OPB_32 ? rescale_operand(b, scale, shift) : b * ((int64_t)1 << (INPUT_SHIFT - 1));
  }
  return subtract ? sa - sb : sa + sb;
}
