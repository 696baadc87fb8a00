/*
 * Walking Vela's driver payload: the register settings go to the register
 * file, the operations to the files that execute them.  The payload format
 * is Vela's (driver_actions.create_driver_payload): the fourcc "COP1", a
 * CONFIG action (two words: the config register, whose macs_per_cc and
 * product fields say which NPU the stream was compiled for, and the id
 * register), NOPs aligning the stream, a CMDSTREAM action whose parameter
 * (byte 1 high, bits 16..31 low) is the stream's length in words, then the
 * stream.  Everything is little-endian words.
 */
#include "ethosu_stream.h"

#include <stddef.h>

#include "ethosu_fmap.h"
#include "ethosu_npu.h"

static uint32_t word_at(const uint8_t* p, uint32_t i) {
  const uint8_t* w = p + (size_t)i * 4u;
  return (uint32_t)w[0] | ((uint32_t)w[1] << 8) | ((uint32_t)w[2] << 16) | ((uint32_t)w[3] << 24);
}

static int32_t fail(ethosu_stream_report_t* r, int32_t code, uint32_t word, uint32_t ctrl, uint32_t opcode) {
  r->word = word;
  r->ctrl = ctrl;
  r->opcode = opcode;
  return code;
}

/* The micro-block depths of an Ethos-U55 by MACs per cycle (Vela: the accelerator configs of
 * ethos_u55.cpp): the weight encoder's layout depends on them.  0 for any other NPU. */
static void configure(ethosu_npu_t* npu, uint32_t config) {
  const uint32_t log2_macs = config & 0xFu, product = config >> 28;
  npu->ofm_ublock_depth = 0;
  npu->ifm_ublock_depth = 0;
  npu->shram_bytes = (config >> 8 & 0xFFu) * 1024u; /* the config register's shram_size, in KB */
  if (product != 0u || log2_macs < 5u || log2_macs > 8u) return; /* not an Ethos-U55 */
  npu->ofm_ublock_depth = log2_macs == 5u ? 4u : 8u;
  npu->ifm_ublock_depth = 8u;
}

/* One operation: execute or check it; 0 when done, else npu->unsupported says why (NULL: the
 * operation itself is not implemented). */
static int32_t operation(ethosu_npu_t* npu, uint32_t opcode, uint32_t param, int execute) {
  switch (opcode) {
    case ETHOSU_OP_POOL:
      return ethosu_op_pool(npu, param, execute);
    case ETHOSU_OP_ELEMENTWISE:
      return ethosu_op_elementwise(npu, param, execute);
    case ETHOSU_OP_CONV:
    case ETHOSU_OP_DEPTHWISE:
      return ethosu_op_conv(npu, opcode, execute);
    case ETHOSU_OP_DMA_START: /* region_mode internal: into the LUT memory */
      if (REG(npu, R_DMA0_DST_REGION) >> 8 & 1u) return ethosu_op_dma_lut(npu, execute);
      return ethosu_op_dma(npu, execute);
    case ETHOSU_OP_DMA_WAIT:
    case ETHOSU_OP_KERNEL_WAIT:
      /* the model runs each operation to completion, in order: every wait is already satisfied */
      npu->unsupported = NULL;
      return 0;
    default:
      npu->unsupported = NULL;
      return 1;
  }
}

int32_t ethosu_stream_run(const uint8_t* payload, uint32_t size, ethosu_npu_t* npu, int execute,
                          ethosu_stream_report_t* r) {
  const uint32_t words = size / 4u;
  uint32_t i = 1, end = 0, n = 0;
  r->commands = 0;
  r->field = NULL;
  if (payload == NULL || npu == NULL || size % 4u != 0 || words < 1 || word_at(payload, 0) != 0x31504F43u) {
    return fail(r, ETHOSU_STREAM_MALFORMED, 0, 0xFFFFFFFFu, 0);
  }
  for (;;) { /* driver actions up to the command stream */
    uint32_t tag, action;
    if (i >= words) return fail(r, ETHOSU_STREAM_MALFORMED, i, 0xFFFFFFFFu, 0);
    tag = word_at(payload, i);
    action = tag & 0xFFu;
    if (action == ETHOSU_DA_CONFIG) {
      if (i + 2 >= words) return fail(r, ETHOSU_STREAM_MALFORMED, i, 0xFFFFFFFFu, action);
      configure(npu, word_at(payload, i + 1));
      i += 3; /* tag, config word, id word */
    } else if (action == ETHOSU_DA_NOP) {
      i += 1;
    } else if (action == ETHOSU_DA_CMDSTREAM) {
      uint32_t length = ((tag >> 8) & 0xFFu) << 16 | (tag >> 16);
      i += 1;
      if (length > words - i) return fail(r, ETHOSU_STREAM_MALFORMED, i - 1, 0xFFFFFFFFu, action);
      end = i + length;
      break;
    } else {
      return fail(r, ETHOSU_STREAM_UNSUPPORTED, i, 0xFFFFFFFFu, action);
    }
  }
  while (i < end) {
    const uint32_t w = word_at(payload, i);
    const uint32_t ctrl = ETHOSU_CMD_CTRL(w), opcode = ETHOSU_CMD_OPCODE(w);
    if (ctrl > ETHOSU_CMD1) return fail(r, ETHOSU_STREAM_MALFORMED, i, ctrl, opcode);
    if (ctrl == ETHOSU_CMD1) {
      if (i + 1 >= end || opcode >= 0x100u) return fail(r, ETHOSU_STREAM_MALFORMED, i, ctrl, opcode);
      npu->reg32[opcode] = word_at(payload, i + 1);
      npu->hi32[opcode] = (uint16_t)ETHOSU_CMD_PARAM(w);
      npu->set32[opcode] = 1;
      i += 2;
    } else if (opcode >= 0x100u) { /* a 16-bit register */
      npu->reg16[opcode - 0x100u] = (uint16_t)ETHOSU_CMD_PARAM(w);
      npu->set16[opcode - 0x100u] = 1;
      i += 1;
    } else if (opcode == ETHOSU_OP_STOP) {
      i += 1;
      n += 1;
      break;
    } else {
      if (operation(npu, opcode, ETHOSU_CMD_PARAM(w), execute) != 0) {
        r->field = npu->unsupported;
        return fail(r, ETHOSU_STREAM_UNSUPPORTED, i, ctrl, opcode);
      }
      npu->operations += 1;
      i += 1;
    }
    n += 1;
  }
  r->commands = n;
  npu->commands += n;
  return fail(r, ETHOSU_STREAM_OK, i, 0, 0);
}
