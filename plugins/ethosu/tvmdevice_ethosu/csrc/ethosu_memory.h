/*
 * The memories a partition's launch uses beside the call's planned scratch
 * (Vela's scratch arena, region 1), each defined where it lives:
 *
 *   tvmd_ethosu_fast_scratch       Vela's fast scratch (region 2): on a board
 *                                  the NPU's SRAM.  An export defines it as a
 *                                  static array in .bss.tvmd_npu_fast, sized by
 *                                  Vela for the model, which a board's linker
 *                                  script places in that SRAM.
 *   tvmd_ethosu_npu_model_memory   the functional model's own memory (the
 *                                  decoded weights of one operation, the IFM
 *                                  window it gathers): what the NPU's weight
 *                                  decoder and internal buffers hold on a
 *                                  board, where it does not exist in system
 *                                  RAM.  An export defines it as a static
 *                                  array in .bss.tvmd_npu_model, sized for the
 *                                  model's largest operation; only the
 *                                  functional model's launch calls it, so a
 *                                  board linking Arm's driver drops it.
 *
 * The export generates both (ethos_u_export.c); the host extension defines
 * them per thread (hostc/ethosu_host_memory.c).  Each returns NULL when it
 * cannot hold the size asked.
 */
#ifndef TVMDEVICE_ETHOSU_MEMORY_H_
#define TVMDEVICE_ETHOSU_MEMORY_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* At least `bytes` bytes, 16-byte aligned, for region 2, or NULL. */
uint8_t* tvmd_ethosu_fast_scratch(uint32_t bytes);

/* At least `slots` int16 values, 16-byte aligned, for the functional model, or NULL. */
int16_t* tvmd_ethosu_npu_model_memory(uint32_t slots);

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_MEMORY_H_ */
