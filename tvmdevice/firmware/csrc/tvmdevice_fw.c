/*
 * The measured-region markers (tvmdevice_fw.h), for every CPU.
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
