/*
 * The partition kernel: one call runs one Vela command stream, as Arm's
 * driver runs it on the NPU (ethosu_invoke_v3 with the base addresses of
 * the regions), through tvmd_ethosu_launch: region 0 is the read-only
 * weights and bias/scale records (the params, in flash), region 1 Vela's
 * scratch arena (the call's planned scratch), region 2 its fast scratch
 * (tvmd_ethosu_fast_scratch: outside the plan, the NPU's SRAM on a board).
 * The memory plan places the inputs and outputs Vela put in its arena at
 * their places in the scratch buffer (PreparedCall.in_scratch): those the NPU
 * addresses in place; any other (one the plan could not place there, or one
 * in the fast scratch) is copied to its place before the stream and from it
 * after.
 */
#include <string.h>

#include "ethosu.h"
#include "ethosu_kernels.h"
#include "ethosu_launch.h"
#include "ethosu_memory.h"
#include "tvmd_ethos_u_params.h"
#include "tvmdevice/kernel_abi.h"

/* The regions of Vela's raw output: read-only data, scratch, fast scratch. */
#define ETHOSU_CALL_REGIONS 3

static uint8_t* io_place(uint8_t* const* region, const size_t* size, const tvmd_ethos_u_partition_params_t* p,
                         uint32_t k) {
  const uint32_t r = p->io_region[k];
  if (r == 0 || r >= ETHOSU_CALL_REGIONS) return NULL; /* region 0 is read-only */
  if ((uint64_t)p->io_offset[k] + p->io_size[k] > size[r]) return NULL;
  return region[r] + p->io_offset[k];
}

int32_t tvmd_ethosu_partition(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_ethos_u_partition_params_t* p = (const tvmd_ethos_u_partition_params_t*)params;
  tvm_device_ethos_u_t* dev = (tvm_device_ethos_u_t*)resource_handle;
  uint8_t* region[ETHOSU_CALL_REGIONS];
  uint64_t base_addrs[ETHOSU_CALL_REGIONS];
  size_t base_addr_sizes[ETHOSU_CALL_REGIONS];
  tvmd_ethosu_work_t work;
  uint32_t k, io = p->num_inputs + p->num_outputs;
  int32_t status;
  int r;
  if (dev == NULL || dev->magic != ETHOSU_MAGIC || dev->power_state != ETHOSU_POWER_ACTIVE) {
    return TVMD_ERR_INVALID_STATE;
  }
  if (io > sizeof(p->io_region) / sizeof(p->io_region[0])) return TVMD_ERR_INVALID_ARGUMENT;
  region[0] = (uint8_t*)(uintptr_t)p->read_only; /* the stream only reads region 0 */
  base_addr_sizes[0] = p->read_only_size;
  region[1] = p->scratch_size ? (uint8_t*)buffers[io] : NULL; /* no scratch: no buffer after the outputs */
  base_addr_sizes[1] = p->scratch_size;
  region[2] = NULL;
  base_addr_sizes[2] = p->fast_scratch_size;
  if (p->fast_scratch_size) {
    region[2] = tvmd_ethosu_fast_scratch(p->fast_scratch_size);
    if (region[2] == NULL) return TVMD_ERR_OUT_OF_MEMORY;
  }
  for (r = 0; r < ETHOSU_CALL_REGIONS; r++) base_addrs[r] = (uint64_t)(uintptr_t)region[r];
  work.weight_slots = p->weight_slots;
  for (k = 0; k < p->num_inputs; k++) {
    uint8_t* place = io_place(region, base_addr_sizes, p, k);
    if (place == NULL) return TVMD_ERR_INVALID_ARGUMENT;
    if (place != (uint8_t*)buffers[k]) memcpy(place, buffers[k], p->io_size[k]);
  }
  status = tvmd_ethosu_launch(dev, p->command_stream, p->command_stream_size, base_addrs, base_addr_sizes,
                              ETHOSU_CALL_REGIONS, &work);
  if (status != TVMD_OK) return status;
  for (k = p->num_inputs; k < io; k++) {
    const uint8_t* place = io_place(region, base_addr_sizes, p, k);
    if (place == NULL) return TVMD_ERR_INVALID_ARGUMENT;
    if (place != (const uint8_t*)buffers[k]) memcpy(buffers[k], place, p->io_size[k]);
  }
  return TVMD_OK;
}

const tvmd_kernel_t tvmd_ethosu_partition_kernel = TVMD_KERNEL_INIT("tvmd_ethosu_partition", tvmd_ethosu_partition);
