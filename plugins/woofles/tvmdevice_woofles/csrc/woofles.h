/*
 * woofles NPU: device-side services shared by the lifecycle, the allocator,
 * the DMA engine and the kernels.  Portable C99, no allocation, no I/O.
 *
 * The device struct tvm_device_woofles_t comes from the generated header
 * tvm_device_woofles.h (declared once, as a tvmdevice Layout, in
 * tvmdevice_woofles/device.py).  Capacities are taken from its array sizes.
 */
#ifndef TVMD_WOOFLES_H_
#define TVMD_WOOFLES_H_

#include <stddef.h>
#include <stdint.h>

#include "tvm_device_woofles.h"
#include "tvmd_woofles_params.h" /* tvmd_woofles_config_t (generated) */
#include "tvmdevice/c_device_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WOOFLES_MAGIC 0x464F4F57u /* "WOOF" */

/* power_state values; mirrored by tvmdevice_woofles.device.PowerState. */
#define WOOFLES_POWER_OFF 0u    /* SRAM unpowered */
#define WOOFLES_POWER_SLEEP 1u  /* SRAM retained, compute clock-gated, DMA on */
#define WOOFLES_POWER_ACTIVE 2u /* compute awake */

/* Descriptor flags; mirrored by tvmdevice_woofles.device.DmaFlag. */
#define WOOFLES_DMA_SRC_HOST 1u
#define WOOFLES_DMA_DST_HOST 2u
#define WOOFLES_DMA_WAIT 4u

/* Indices of tvm_device_woofles_t.transitions. */
enum {
  WOOFLES_T_INIT = 0,
  WOOFLES_T_OPEN,
  WOOFLES_T_ACTIVATE,
  WOOFLES_T_DEACTIVATE,
  WOOFLES_T_CLOSE,
  WOOFLES_T_DESTROY
};

/* Cycle model constants (documented in the plugin README). */
#define WOOFLES_DMA_SETUP_CYCLES 16u  /* descriptor fetch + bus arbitration */
#define WOOFLES_WAKE_CYCLES 500u      /* SLEEP -> ACTIVE: clock ungating, PLL lock */
#define WOOFLES_TILE_OVERHEAD 4u      /* per output tile: requantize + write back */
#define WOOFLES_LAUNCH_CYCLES 32u     /* per kernel: command decode + DMA barrier */

/* Largest MAC array the kernels' accumulator tile holds; the same bound is
 * checked in Python (device.MAX_MAC_WIDTH) before Init accepts a width. */
#define WOOFLES_MAX_MAC_WIDTH 256u

#define WOOFLES_COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* Host pointer backing the device range [addr, addr + nbytes), or NULL when
 * the range is not inside the SRAM window or the SRAM is not powered. */
static inline uint8_t* woofles_translate(const tvm_device_woofles_t* dev, uint64_t addr,
                                         uint64_t nbytes) {
  if (dev->sram_host == NULL || addr < dev->sram_base) return NULL;
  uint64_t offset = addr - dev->sram_base;
  if (offset > dev->sram_size || nbytes > dev->sram_size - offset) return NULL;
  return dev->sram_host + offset;
}

/*
 * The C Device API of a firmware (or any C caller), beside the lifecycle of
 * tvm_device_woofles.h.  Lifecycle of a firmware:
 *   Init -> Configure -> Open -> {AllocDataSpace, CopyToDevice}
 *        -> (Activate -> kernels -> Deactivate)* -> CopyFromDevice -> Close -> Destroy
 */

/* Sets what the target options decide (the Python init hook calls it too):
 * SRAM size, place and backing, MAC width, DMA bandwidth, clock.  Only between
 * Init and Open (power OFF).  config->sram_host may be NULL when the backing
 * memory is handed over (in dev->sram_host) before each Open; otherwise it
 * backs the SRAM for the device's lifetime.  Returns TVMD_ERR_INVALID_ARGUMENT
 * for a value the hardware cannot have, TVMD_ERR_INVALID_STATE outside OFF. */
int32_t TVMDeviceWooflesConfigure(tvm_device_woofles_t* dev, const tvmd_woofles_config_t* config);

/* SRAM allocation (woofles_alloc.c): first fit; *out_addr is a device
 * address aligned to `alignment` (a power of two).  Between Open and Close. */
int32_t TVMDeviceWooflesAllocDataSpace(tvm_device_woofles_t* dev, uint64_t nbytes, uint64_t alignment,
                                       uint64_t* out_addr);
/* Frees the block that starts at device address addr. */
int32_t TVMDeviceWooflesFreeDataSpace(tvm_device_woofles_t* dev, uint64_t addr);

/* Synchronous copies by DMA on the current stream (woofles_dma.c): every
 * transfer queued before is retired too, and the data has landed when they
 * return.  Between Open and Close (SLEEP or ACTIVE: DMA sits in the SRAM's
 * power domain). */
int32_t TVMDeviceWooflesCopyToDevice(tvm_device_woofles_t* dev, uint64_t dst, const void* src, uint64_t nbytes);
int32_t TVMDeviceWooflesCopyFromDevice(tvm_device_woofles_t* dev, void* dst, uint64_t src, uint64_t nbytes);

/* Adds estimated cycles to every counter: total, this run, the power state's. */
void woofles_account_cycles(tvm_device_woofles_t* dev, uint64_t cycles);

/* Allocator internals (woofles_alloc.c). */
void tvmd_woofles_alloc_stats(const tvm_device_woofles_t* dev, uint64_t* free_bytes,
                              uint64_t* largest_free);
void tvmd_woofles_alloc_reset(tvm_device_woofles_t* dev);

/* DMA engine (woofles_dma.c). */
int32_t tvmd_woofles_stream_create(tvm_device_woofles_t* dev, uint32_t* out_slot);
int32_t tvmd_woofles_stream_free(tvm_device_woofles_t* dev, uint32_t slot);
int32_t tvmd_woofles_dma_enqueue(tvm_device_woofles_t* dev, uint32_t slot, uint64_t src,
                                 uint64_t dst, uint64_t nbytes, uint32_t flags, uint64_t* out_seq);
int32_t tvmd_woofles_dma_wait_stream(tvm_device_woofles_t* dev, uint32_t src_slot,
                                     uint32_t dst_slot);
int32_t tvmd_woofles_stream_sync(tvm_device_woofles_t* dev, uint32_t slot);
int32_t tvmd_woofles_dma_drain(tvm_device_woofles_t* dev);
void tvmd_woofles_dma_reset(tvm_device_woofles_t* dev);

/* Kernel prologue: the handle is a live woofles device, compute is awake,
 * and every DMA transfer queued before the launch has landed. */
int32_t woofles_kernel_begin(tvm_device_woofles_t* dev);
/* Kernel epilogue: charge the launch's estimated cycles. */
void woofles_kernel_end(tvm_device_woofles_t* dev, uint64_t cycles);

#ifdef __cplusplus
}
#endif
#endif /* TVMD_WOOFLES_H_ */
