/*
 * The LUT activation: a DMA into the internal LUT memory, then operations
 * whose ACTIVATION names a table (TABLE_0..TABLE_7) map each int8 OFM value
 * through it.
 *
 * The LUT memory is the last 2 KB of the NPU's shared buffer (SHRAM), whose
 * size the CONFIG driver action's config register gives; Vela addresses it
 * with a DMA whose destination region_mode is internal, at the buffer's size
 * less 2 KB plus 256 bytes per table slot, and selects slot t with the
 * activation function TABLE_0 + t.  An int8 table holds 256 values, the
 * output for each input value from -128 to 127 in order.
 */
#include <string.h>

#include "ethosu_fmap.h"
#include "ethosu_npu.h"

enum { ACT_TABLE_0 = 16, ACT_TABLE_7 = 23 };

int32_t ethosu_op_dma_lut(ethosu_npu_t* npu, int execute) {
  const uint32_t src_r = REG(npu, R_DMA0_SRC_REGION), dst_r = REG(npu, R_DMA0_DST_REGION);
  const uint64_t src = reg_addr(npu, R1_DMA0_SRC), dst = reg_addr(npu, R1_DMA0_DST);
  const uint64_t len = reg_addr(npu, R1_DMA0_LEN);
  uint64_t lut_base, off, slot;
  npu->unsupported = NULL;
  if (npu->shram_bytes < ETHOSU_LUT_BYTES) return ethosu_refuse(npu, "CONFIG (no shared buffer size for the LUT)");
  if (src_r >> 8 & 1u) return ethosu_refuse(npu, "DMA0 region_mode (internal to internal)");
  if ((src_r >> 9 & 3u) || (dst_r >> 9 & 3u)) return ethosu_refuse(npu, "DMA0 stride_mode (not 1-D)");
  if ((src_r & 0xFFu) >= ETHOSU_REGIONS) return ethosu_refuse(npu, "DMA0 region");
  lut_base = npu->shram_bytes - ETHOSU_LUT_BYTES;
  if (dst < lut_base || len == 0u || dst - lut_base + len > ETHOSU_LUT_BYTES) {
    return ethosu_refuse(npu, "DMA0_DST (internal, outside the LUT memory)");
  }
  off = dst - lut_base;
  if (off % ETHOSU_LUT_SLOT_BYTES != 0u || len % ETHOSU_LUT_SLOT_BYTES != 0u) {
    return ethosu_refuse(npu, "DMA0_DST/LEN (not whole LUT slots)");
  }
  if (src + len > npu->region_size[src_r & 0xFFu]) return ethosu_refuse(npu, "DMA0 addresses (outside the region)");
  for (slot = off / ETHOSU_LUT_SLOT_BYTES; slot < (off + len) / ETHOSU_LUT_SLOT_BYTES; slot++) {
    npu->lut_loaded |= (uint8_t)(1u << slot);
  }
  if (!execute) return 0;
  memcpy(npu->lut + off, npu->region[src_r & 0xFFu] + src, (size_t)len);
  npu->dma_bytes += len;
  return 0;
}

int ethosu_lut_check(ethosu_npu_t* npu, int32_t* table) {
  const uint32_t act = REG(npu, R_ACTIVATION), function = act & 0xFFFu;
  *table = -1;
  if (function == 0u) return 0;
  if (function < ACT_TABLE_0 || function > ACT_TABLE_7) return ethosu_refuse(npu, "ACTIVATION function (TANH or SIGMOID)");
  if (!(npu->lut_loaded >> (function - ACT_TABLE_0) & 1u)) return ethosu_refuse(npu, "ACTIVATION (a LUT slot no DMA loaded)");
  /* where a narrower clamp would sit relative to the table is not publicly defined */
  if (sext16(REG(npu, R_ACTIVATION_MIN)) > -128 || sext16(REG(npu, R_ACTIVATION_MAX)) < 127) {
    return ethosu_refuse(npu, "ACTIVATION_MIN/MAX (a clamp with a LUT)");
  }
  *table = (int32_t)(function - ACT_TABLE_0);
  return 0;
}
