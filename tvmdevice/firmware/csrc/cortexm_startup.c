/*
 * Start-up for Cortex-M under QEMU (mps2-an385, mps2-an386, mps3-an547).
 *
 * Reset: enable the FPU (and MVE) where the CPU has one, copy .data from
 * flash, zero .bss, set the stack limit (v8-M), paint the stack with a
 * pattern, run the C library's initialisers, call main with the semihosting
 * command line as argc/argv, and exit with main's status.  At exit the
 * stack's high-water mark is printed on the semihosting console
 * (TVMD_FW_STACK_REPORT); an unexpected exception prints where it happened
 * (TVMD_FW_FAULT_REPORT) and stops QEMU with a non-zero status.
 *
 * The linker script provides the symbols below (see cortexm.ld).
 */
#include <stdint.h>
#include <stdlib.h>

#include "cortexm_semihost.h"

#define TVMD_FW_STACK_PAINT 0xA5A5A5A5u
#define TVMD_FW_STACK_REPORT "tvmdevice-fw: stack_used="
#define TVMD_FW_FAULT_REPORT "tvmdevice-fw: fault exception="

/* Bytes below the reset handler's stack pointer left unpainted (its own callees' frames). */
#define TVMD_FW_PAINT_MARGIN 64u

#define TVMD_SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)

extern uint32_t __data_load__[];
extern uint32_t __data_start__[];
extern uint32_t __data_end__[];
extern uint32_t __bss_start__[];
extern uint32_t __bss_end__[];
extern uint32_t __stack_limit__[];
extern uint32_t __stack_top__[];

int main(int argc, char **argv);
int tvmd_fw_args(char ***argv);
void __libc_init_array(void);
void Reset_Handler(void);
void tvmd_fw_exception(void);
void tvmd_fw_fault(const uint32_t *frame);
__attribute__((noreturn)) void tvmd_fw_exit(int status);

/* The system exceptions: initial stack pointer, reset, then NMI .. SysTick. */
__attribute__((section(".vectors"), used)) const uintptr_t tvmd_fw_vectors[16] = {
    (uintptr_t)__stack_top__,      (uintptr_t)Reset_Handler,      (uintptr_t)tvmd_fw_exception,
    (uintptr_t)tvmd_fw_exception,  (uintptr_t)tvmd_fw_exception,  (uintptr_t)tvmd_fw_exception,
    (uintptr_t)tvmd_fw_exception,  (uintptr_t)tvmd_fw_exception,  0,
    0,                             0,                             (uintptr_t)tvmd_fw_exception,
    (uintptr_t)tvmd_fw_exception,  0,                             (uintptr_t)tvmd_fw_exception,
    (uintptr_t)tvmd_fw_exception,
};

void Reset_Handler(void) {
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
  /* CP10 and CP11 full access, before any floating-point or vector instruction runs. */
  TVMD_SCB_CPACR |= 0xFu << 20;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
  /* A stack overflow faults (STKOF) instead of overwriting .bss. */
  __asm__ volatile("msr msplim, %0" ::"r"(__stack_limit__));
#endif
  for (uint32_t *src = __data_load__, *dst = __data_start__; dst < __data_end__;) {
    *dst++ = *src++;
  }
  for (uint32_t *dst = __bss_start__; dst < __bss_end__;) {
    *dst++ = 0;
  }
  uintptr_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  for (volatile uint32_t *p = __stack_limit__; (uintptr_t)p < sp - TVMD_FW_PAINT_MARGIN; ++p) {
    *p = TVMD_FW_STACK_PAINT;
  }
  __libc_init_array();
  char **argv;
  int argc = tvmd_fw_args(&argv);
  exit(main(argc, argv));
}

/* crti/crtn are not linked (-nostartfiles): the .init/.fini hooks __libc_init_array expects are empty. */
void _init(void);
void _fini(void);
void _init(void) {}
void _fini(void) {}

static void tvmd_fw_format(char *out, uint32_t value, unsigned base) {
  char digits[12];
  int n = 0;
  do {
    digits[n++] = "0123456789abcdef"[value % base];
    value /= base;
  } while (value != 0);
  while (n > 0) {
    *out++ = digits[--n];
  }
  *out = '\0';
}

static uint32_t tvmd_fw_stack_used(void) {
  const uint32_t *p = __stack_limit__;
  while (p < __stack_top__ && *p == TVMD_FW_STACK_PAINT) {
    ++p;
  }
  return (uint32_t)((uintptr_t)__stack_top__ - (uintptr_t)p);
}

void tvmd_fw_exit(int status) {
  char number[12];
  int32_t err = tvmd_fw_console_err();
  tvmd_fw_write_str(err, "\n" TVMD_FW_STACK_REPORT);
  tvmd_fw_format(number, tvmd_fw_stack_used(), 10);
  tvmd_fw_write_str(err, number);
  tvmd_fw_write_str(err, " stack_size=");
  tvmd_fw_format(number, (uint32_t)((uintptr_t)__stack_top__ - (uintptr_t)__stack_limit__), 10);
  tvmd_fw_write_str(err, number);
  tvmd_fw_write_str(err, "\n");
  const uint32_t block[2] = {TVMD_SH_ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
  for (;;) {
    tvmd_sh_call(TVMD_SH_SYS_EXIT_EXTENDED, block);
  }
}

/* Every exception but reset: hand the stacked frame (r0-r3, r12, lr, pc, xpsr) to tvmd_fw_fault. */
__attribute__((naked)) void tvmd_fw_exception(void) {
  __asm__ volatile(
      "mrs r0, msp\n\t"
      "b tvmd_fw_fault\n\t");
}

void tvmd_fw_fault(const uint32_t *frame) {
  uint32_t ipsr;
  char number[12];
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  int32_t err = tvmd_fw_console_err();
  tvmd_fw_write_str(err, "\n" TVMD_FW_FAULT_REPORT);
  tvmd_fw_format(number, ipsr & 0x1FFu, 10);
  tvmd_fw_write_str(err, number);
  tvmd_fw_write_str(err, " pc=0x");
  tvmd_fw_format(number, frame[6], 16);
  tvmd_fw_write_str(err, number);
  tvmd_fw_write_str(err, "\n");
  const uint32_t block[2] = {TVMD_SH_ADP_STOPPED_INTERNAL_ERROR, 0};
  for (;;) {
    tvmd_sh_call(TVMD_SH_SYS_EXIT_EXTENDED, block);
  }
}
