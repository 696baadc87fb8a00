/*
 * The register command stream as Vela hands it to Arm's driver: a "COP1"
 * driver payload (driver actions, then the NPU's command stream), and the
 * check that every command in it is one the functional model implements.
 */
#ifndef TVMDEVICE_ETHOSU_STREAM_H_
#define TVMDEVICE_ETHOSU_STREAM_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A command word: opcode in bits 0..9, control in bits 14..15 (0: no payload,
 * 1: one 32-bit payload word follows), a 16-bit parameter in bits 16..31
 * (ethos_u55_regs: cmd_ctrl, cmd0, cmd1). */
#define ETHOSU_CMD_OPCODE(word) ((word) & 0x3FFu)
#define ETHOSU_CMD_CTRL(word) (((word) >> 14) & 0x3u)
#define ETHOSU_CMD_PARAM(word) ((word) >> 16)
enum { ETHOSU_CMD0 = 0, ETHOSU_CMD1 = 1 };

/* Driver actions of the payload (Vela's driver_actions.DACommands): the low
 * byte of a tag word; its high 16 bits (and byte 1) are the parameter. */
enum {
  ETHOSU_DA_RESERVED = 0x00,
  ETHOSU_DA_CONFIG = 0x01,
  ETHOSU_DA_CMDSTREAM = 0x02,
  ETHOSU_DA_READ_APB = 0x03,
  ETHOSU_DA_DUMP_SHRAM = 0x04,
  ETHOSU_DA_NOP = 0x05
};

/* Outcome of ethosu_stream_check. */
enum {
  ETHOSU_STREAM_OK = 0,
  ETHOSU_STREAM_MALFORMED = 1,     /* not a COP1 payload, or truncated: `word` says where */
  ETHOSU_STREAM_UNSUPPORTED = 2    /* a driver action or command the model does not implement */
};

typedef struct {
  uint32_t word;      /* index (in 32-bit words) of the offending word */
  uint32_t ctrl;      /* its control field (ETHOSU_CMD0/1), or 0xFFFFFFFF for a driver action */
  uint32_t opcode;    /* its opcode (or the driver action) */
  uint32_t commands;  /* commands in the stream (when OK) */
  const char* field;  /* for an operation: the register field the model does not implement, or NULL */
} ethosu_stream_report_t;

struct ethosu_npu;

/* Walk a driver payload of `size` bytes, setting `npu`'s registers and checking (execute=0) or
 * executing (execute=1) each operation; fill `report`; an ETHOSU_STREAM_* code.  Checking needs
 * only the regions' sizes in `npu`; executing needs their memory and the working memory too. */
int32_t ethosu_stream_run(const uint8_t* payload, uint32_t size, struct ethosu_npu* npu, int execute,
                          ethosu_stream_report_t* report);

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_STREAM_H_ */
