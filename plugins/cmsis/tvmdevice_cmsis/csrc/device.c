/*
 * The cmsis-nn device's C Device API lifecycle: TVMDeviceCmsisNn<Hook>, the
 * functions an AOT-generated firmware calls (prototypes in the generated
 * tvm_device_cmsis_nn.h).  The Python plugin calls the same functions, so
 * host runs and firmware share one implementation.
 *
 * The framework checks the order of transitions before calling; these
 * functions only reject what would corrupt the struct (NULL, a device that
 * was never initialized).  Target options that C cannot see (-scratch_kb)
 * are written into the struct by the host after Init.
 */
#include <string.h>

#include "internal.h"

int32_t TVMDeviceCmsisNnInit(tvm_device_cmsis_nn_t* device) {
  if (device == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  memset(device, 0, sizeof(*device));
  device->api_version = TVMD_CMSIS_API_VERSION;
  return TVMD_OK;
}

int32_t TVMDeviceCmsisNnOpen(tvm_device_cmsis_nn_t* device) {
  if (device == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (device->api_version != TVMD_CMSIS_API_VERSION) return TVMD_ERR_INVALID_STATE;
  device->num_opens += 1;
  device->scratch = NULL;
  device->scratch_bytes = 0;
  device->scratch_in_use = 0;
  return TVMD_OK;
}

int32_t TVMDeviceCmsisNnActivate(tvm_device_cmsis_nn_t* device) {
  if (device == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (device->api_version != TVMD_CMSIS_API_VERSION) return TVMD_ERR_INVALID_STATE;
  device->active = 1; /* a CPU has no low-power state to leave; kernels may run now */
  return TVMD_OK;
}

int32_t TVMDeviceCmsisNnDeactivate(tvm_device_cmsis_nn_t* device) {
  if (device == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  device->active = 0; /* scratch and counters are kept, as Deactivate requires */
  return TVMD_OK;
}

int32_t TVMDeviceCmsisNnClose(tvm_device_cmsis_nn_t* device) {
  if (device == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  device->active = 0;
  device->scratch = NULL; /* the host freed every workspace block before Close */
  device->scratch_bytes = 0;
  device->scratch_in_use = 0;
  return TVMD_OK;
}

int32_t TVMDeviceCmsisNnDestroy(tvm_device_cmsis_nn_t* device) {
  if (device == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  memset(device, 0, sizeof(*device));
  return TVMD_OK;
}
