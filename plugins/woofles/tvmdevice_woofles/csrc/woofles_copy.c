/*
 * The executor's copy steps as kernel-ABI calls, so that a run with copies
 * to and from the SRAM stays in C: each is one synchronous DMA transfer on
 * the current stream (TVMDeviceWooflesCopyToDevice/FromDevice: queued, then
 * every queue drained), the same descriptors, cycles and counters as the
 * Device API's CopyDataFromTo followed by StreamSync.
 * buffers = {src, dst}: a host pointer and an SRAM device address.
 */
#include "woofles.h"
#include "woofles_kernels.h"

int32_t tvmd_woofles_copy_to_device(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_woofles_copy_params_t* p = (const tvmd_woofles_copy_params_t*)params;
  if (p == NULL || buffers == NULL || resource_handle == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  return TVMDeviceWooflesCopyToDevice((tvm_device_woofles_t*)resource_handle, (uint64_t)(uintptr_t)buffers[1],
                                      buffers[0], p->nbytes);
}

int32_t tvmd_woofles_copy_from_device(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_woofles_copy_params_t* p = (const tvmd_woofles_copy_params_t*)params;
  if (p == NULL || buffers == NULL || resource_handle == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  return TVMDeviceWooflesCopyFromDevice((tvm_device_woofles_t*)resource_handle, buffers[1],
                                        (uint64_t)(uintptr_t)buffers[0], p->nbytes);
}

const tvmd_kernel_t tvmd_woofles_copy_kernels[] = {
    TVMD_KERNEL_INIT("tvmd_woofles_copy_to_device", tvmd_woofles_copy_to_device),
    TVMD_KERNEL_INIT("tvmd_woofles_copy_from_device", tvmd_woofles_copy_from_device),
};
