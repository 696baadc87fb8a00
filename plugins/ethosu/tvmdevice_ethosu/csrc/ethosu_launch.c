/*
 * The launch function on the functional model: what the NPU would do with
 * the command stream, run by the CPU, counting its commands, operations,
 * MACs and DMA bytes into the device struct.  Its own memory (the decoded
 * weights) is tvmd_ethosu_npu_model_memory's, never the plan's.
 */
#include <string.h>

#include "ethosu.h"
#include "ethosu_launch.h"
#include "ethosu_memory.h"
#include "ethosu_npu.h"
#include "ethosu_stream.h"

int32_t tvmd_ethosu_launch(tvm_device_ethos_u_t* dev, const void* cms, size_t cms_size, uint64_t* base_addrs,
                           size_t* base_addr_sizes, int num_base_addr, void* user_arg) {
  const tvmd_ethosu_work_t* work = (const tvmd_ethosu_work_t*)user_arg;
  ethosu_npu_t npu;
  ethosu_stream_report_t report;
  int32_t status;
  int r;
  if (dev == NULL || cms == NULL || work == NULL || num_base_addr < 1 || num_base_addr > ETHOSU_REGIONS ||
      cms_size > UINT32_MAX) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  memset(&npu, 0, sizeof(npu));
  for (r = 0; r < num_base_addr; r++) {
    npu.region[r] = (uint8_t*)(uintptr_t)base_addrs[r];
    npu.region_size[r] = base_addr_sizes[r];
  }
  npu.read_only_regions = 1u; /* region 0: the weights and bias/scale records, in flash */
  if (work->weight_slots) {
    npu.weights = tvmd_ethosu_npu_model_memory(work->weight_slots);
    if (npu.weights == NULL) return TVMD_ERR_OUT_OF_MEMORY;
    npu.weights_capacity = work->weight_slots;
  }
  status = ethosu_stream_run((const uint8_t*)cms, (uint32_t)cms_size, &npu, 1, &report);
  dev->launches += 1;
  dev->commands += npu.commands;
  dev->operations += npu.operations;
  dev->macs += npu.macs;
  dev->dma_bytes += npu.dma_bytes;
  return status == ETHOSU_STREAM_OK ? TVMD_OK : TVMD_ERR_KERNEL; /* compile time checked the stream */
}
