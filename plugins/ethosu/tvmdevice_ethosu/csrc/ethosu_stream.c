/*
 * Walking Vela's driver payload and checking its commands against what the
 * functional model implements.  The payload format is Vela's
 * (driver_actions.create_driver_payload): the fourcc "COP1", a CONFIG action
 * (two words: config and id registers), NOPs aligning the stream, a CMDSTREAM
 * action whose parameter (byte 1 high, bits 16..31 low) is the stream's
 * length in words, then the stream.  Everything is little-endian words.
 */
#include "ethosu_stream.h"

#include <stddef.h>

static uint32_t word_at(const uint8_t* p, uint32_t i) {
  const uint8_t* w = p + (size_t)i * 4u;
  return (uint32_t)w[0] | ((uint32_t)w[1] << 8) | ((uint32_t)w[2] << 16) | ((uint32_t)w[3] << 24);
}

/* Commands with opcodes 0x100 and up (cmd0 with a 16-bit parameter) and every
 * cmd1 (a 32-bit payload) set a register of the NPU for later operations
 * (ethos_u55_regs: NPU_SET_*); the operations are the cmd0 opcodes below 0x100
 * (NPU_OP_*).  The model executes no operation yet: a stream that starts one
 * is refused, naming it, so the partition falls to the next device.  Only
 * NPU_OP_STOP (the end of the stream) is implemented. */
int ethosu_command_implemented(uint32_t ctrl, uint32_t opcode) {
  if (ctrl == ETHOSU_CMD1 || opcode >= 0x100u) return 1; /* a register setting */
  return opcode == 0x000u;                              /* NPU_OP_STOP */
}

static int32_t fail(ethosu_stream_report_t* r, int32_t code, uint32_t word, uint32_t ctrl, uint32_t opcode) {
  r->word = word;
  r->ctrl = ctrl;
  r->opcode = opcode;
  return code;
}

int32_t ethosu_stream_check(const uint8_t* payload, uint32_t size, ethosu_stream_report_t* r) {
  const uint32_t words = size / 4u;
  uint32_t i = 1, end = 0, n = 0;
  r->commands = 0;
  if (payload == NULL || size % 4u != 0 || words < 1 || word_at(payload, 0) != 0x31504F43u /* "COP1" */) {
    return fail(r, ETHOSU_STREAM_MALFORMED, 0, 0xFFFFFFFFu, 0);
  }
  for (;;) { /* driver actions up to the command stream */
    uint32_t tag, action;
    if (i >= words) return fail(r, ETHOSU_STREAM_MALFORMED, i, 0xFFFFFFFFu, 0);
    tag = word_at(payload, i);
    action = tag & 0xFFu;
    if (action == ETHOSU_DA_CONFIG) {
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
    if (ctrl == ETHOSU_CMD1 && i + 1 >= end) return fail(r, ETHOSU_STREAM_MALFORMED, i, ctrl, opcode);
    if (!ethosu_command_implemented(ctrl, opcode)) return fail(r, ETHOSU_STREAM_UNSUPPORTED, i, ctrl, opcode);
    i += ctrl == ETHOSU_CMD1 ? 2u : 1u;
    n += 1;
  }
  r->commands = n;
  return fail(r, ETHOSU_STREAM_OK, i, 0, 0);
}
