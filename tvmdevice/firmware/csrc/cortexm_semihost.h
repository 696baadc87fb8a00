/*
 * Arm semihosting on M-profile: the operation numbers this platform uses and
 * the call itself (BKPT 0xAB, operation in r0, parameter block in r1, result
 * in r0), after the Arm "Semihosting for AArch32 and AArch64" specification.
 */
#ifndef TVMDEVICE_FW_CORTEXM_SEMIHOST_H_
#define TVMDEVICE_FW_CORTEXM_SEMIHOST_H_

#include <stdint.h>

#define TVMD_SH_SYS_OPEN 0x01
#define TVMD_SH_SYS_CLOSE 0x02
#define TVMD_SH_SYS_WRITE 0x05
#define TVMD_SH_SYS_READ 0x06
#define TVMD_SH_SYS_ISTTY 0x09
#define TVMD_SH_SYS_SEEK 0x0A
#define TVMD_SH_SYS_FLEN 0x0C
#define TVMD_SH_SYS_REMOVE 0x0E
#define TVMD_SH_SYS_ERRNO 0x13
#define TVMD_SH_SYS_GET_CMDLINE 0x15
#define TVMD_SH_SYS_EXIT_EXTENDED 0x20

/* SYS_EXIT reason codes. */
#define TVMD_SH_ADP_STOPPED_APPLICATION_EXIT 0x20026
#define TVMD_SH_ADP_STOPPED_INTERNAL_ERROR 0x20024

/* SYS_OPEN modes are indexes into fopen's mode strings: "rb" "r+b" "wb" "w+b" "ab" "a+b". */
#define TVMD_SH_MODE_RB 1
#define TVMD_SH_MODE_RPB 3
#define TVMD_SH_MODE_WB 5
#define TVMD_SH_MODE_WPB 7
#define TVMD_SH_MODE_AB 9
#define TVMD_SH_MODE_APB 11
/* On the special file ":tt": read is the console's input, write its output, append its error stream. */
#define TVMD_SH_MODE_TT_IN 0
#define TVMD_SH_MODE_TT_OUT 4
#define TVMD_SH_MODE_TT_ERR 8

static inline int32_t tvmd_sh_call(int32_t op, const void *block) {
  register int32_t r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = block;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

/* Write a NUL-terminated string to a semihosting handle (no stdio: safe in faults and at exit). */
void tvmd_fw_write_str(int32_t handle, const char *s);

/* The semihosting handle of the console's error stream (opened on first use). */
int32_t tvmd_fw_console_err(void);

#endif /* TVMDEVICE_FW_CORTEXM_SEMIHOST_H_ */
