/*
 * The measured-region markers (tvmdevice_fw.h), for every CPU, and the profiling mark (Cortex-M).
 *
 * They do nothing a program can observe: the instruction counter finds them
 * by their addresses in the ELF symbol table.  Each writes a different value
 * so that the compiler can neither drop them nor fold the two into one
 * function at a single address.
 */
#include "tvmdevice_fw.h"

volatile int tvmd_fw_region_state;

__attribute__((noinline)) void tvmd_fw_region_begin(void) { tvmd_fw_region_state = 1; }

__attribute__((noinline)) void tvmd_fw_region_end(void) { tvmd_fw_region_state = 2; }

#if defined(__arm__)
/* A mark spells its id to the instruction counter, which knows these functions by their addresses:
 * start, then its 16 bits from the highest, each one or zero, then stop. */
__attribute__((noinline)) void tvmd_fw_mark_start(void) { tvmd_fw_region_state = 3; }
__attribute__((noinline)) void tvmd_fw_mark_zero(void) { tvmd_fw_region_state = 4; }
__attribute__((noinline)) void tvmd_fw_mark_one(void) { tvmd_fw_region_state = 5; }
__attribute__((noinline)) void tvmd_fw_mark_stop(void) { tvmd_fw_region_state = 6; }

__attribute__((noinline)) void tvmd_fw_mark(unsigned int id) {
  tvmd_fw_mark_start();
  for (int bit = 15; bit >= 0; --bit) {
    if ((id >> bit) & 1u) {
      tvmd_fw_mark_one();
    } else {
      tvmd_fw_mark_zero();
    }
  }
  tvmd_fw_mark_stop();
}
#endif
