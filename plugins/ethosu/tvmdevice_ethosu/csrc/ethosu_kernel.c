/*
 * The partition kernel: one call runs one Vela command stream on the
 * functional model, as Arm's driver runs it on the NPU (ethosu_invoke_v3
 * with the base addresses of the regions): region 0 is the read-only
 * weights and bias/scale records, region 1 Vela's scratch arena, region 2
 * its fast scratch.  The partition's inputs are copied to their places in
 * the arena first and its outputs from theirs after.
 */
#include <string.h>

#include "ethosu.h"
#include "ethosu_npu.h"
#include "ethosu_stream.h"
#include "ethosu_weights.h"
#include "ethosu_kernels.h"
#include "tvmd_ethos_u_params.h"
#include "tvmdevice/kernel_abi.h"

static uint8_t* io_place(ethosu_npu_t* npu, const tvmd_ethos_u_partition_params_t* p, uint32_t k) {
  const uint32_t region = p->io_region[k];
  if (region >= ETHOSU_REGIONS || npu->region[region] == NULL) return NULL;
  if ((uint64_t)p->io_offset[k] + p->io_size[k] > npu->region_size[region]) return NULL;
  return npu->region[region] + p->io_offset[k];
}

static int32_t ethosu_partition(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_ethos_u_partition_params_t* p = (const tvmd_ethos_u_partition_params_t*)params;
  tvm_device_ethos_u_t* dev = (tvm_device_ethos_u_t*)resource_handle;
  uint8_t* scratch;
  ethosu_npu_t npu;
  ethosu_stream_report_t report;
  uint32_t k, io = p->num_inputs + p->num_outputs;
  int32_t status;
  if (dev == NULL || dev->magic != ETHOSU_MAGIC || dev->power_state != ETHOSU_POWER_ACTIVE) {
    return TVMD_ERR_INVALID_STATE;
  }
  if (io > sizeof(p->io_region) / sizeof(p->io_region[0])) return TVMD_ERR_INVALID_ARGUMENT;
  scratch = (uint8_t*)buffers[io];
  memset(&npu, 0, sizeof(npu));
  npu.region[0] = (uint8_t*)(uintptr_t)p->read_only; /* the stream only reads region 0 */
  npu.region_size[0] = p->read_only_size;
  npu.read_only_regions = 1u;
  npu.region[1] = scratch;
  npu.region_size[1] = p->scratch_size;
  npu.region[2] = scratch + p->fast_scratch_offset;
  npu.region_size[2] = p->fast_scratch_size;
  npu.weights = (int16_t*)(void*)(scratch + p->work_offset);
  npu.weights_capacity = p->weight_slots;
  for (k = 0; k < p->num_inputs; k++) {
    uint8_t* place = io_place(&npu, p, k);
    if (place == NULL) return TVMD_ERR_INVALID_ARGUMENT;
    memcpy(place, buffers[k], p->io_size[k]);
  }
  status = ethosu_stream_run(p->command_stream, p->command_stream_size, &npu, 1, &report);
  dev->launches += 1;
  dev->commands += npu.commands;
  dev->operations += npu.operations;
  dev->macs += npu.macs;
  dev->dma_bytes += npu.dma_bytes;
  if (status != ETHOSU_STREAM_OK) return TVMD_ERR_KERNEL; /* compile time checked the stream */
  for (k = p->num_inputs; k < io; k++) {
    const uint8_t* place = io_place(&npu, p, k);
    if (place == NULL) return TVMD_ERR_INVALID_ARGUMENT;
    memcpy(buffers[k], place, p->io_size[k]);
  }
  return TVMD_OK;
}

const tvmd_kernel_t tvmd_ethosu_partition_kernel = TVMD_KERNEL_INIT("tvmd_ethosu_partition", ethosu_partition);
