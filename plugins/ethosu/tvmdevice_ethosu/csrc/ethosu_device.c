/*
 * ethos-u lifecycle: the TVMDeviceEthosU<Hook> functions of the generated
 * header, enforcing the NPU's power-state machine
 *
 *   (zeroed) --Init--> OFF --Open--> IDLE --Activate--> ACTIVE
 *   (zeroed) <-Destroy- OFF <--Close-- IDLE <-Deactivate-- ACTIVE
 *
 * independently of the host framework's checks, so that a firmware linking
 * this file gets the same refusals.  Open clears the work counters (a fresh
 * power-up); they then count across Activate/Deactivate until Close.
 * Nothing here allocates.
 */
#include <string.h>

#include "ethosu.h"

static int ethosu_live(const tvm_device_ethos_u_t* dev) { return dev != NULL && dev->magic == ETHOSU_MAGIC; }

static int32_t ethosu_step(tvm_device_ethos_u_t* dev, uint32_t from, uint32_t to, int which) {
  if (!ethosu_live(dev) || dev->power_state != from) return TVMD_ERR_INVALID_STATE;
  dev->power_state = to;
  dev->transitions[which] += 1;
  return TVMD_OK;
}

int32_t TVMDeviceEthosUInit(tvm_device_ethos_u_t* dev) {
  if (dev == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (dev->magic == ETHOSU_MAGIC) return TVMD_ERR_INVALID_STATE; /* already initialized */
  memset(dev, 0, sizeof(*dev));
  dev->magic = ETHOSU_MAGIC;
  dev->api_version = TVMD_DEVICE_API_VERSION;
  dev->power_state = ETHOSU_POWER_OFF;
  dev->transitions[ETHOSU_T_INIT] = 1;
  return TVMD_OK;
}

int32_t TVMDeviceEthosUOpen(tvm_device_ethos_u_t* dev) {
  int32_t status = ethosu_step(dev, ETHOSU_POWER_OFF, ETHOSU_POWER_IDLE, ETHOSU_T_OPEN);
  if (status == TVMD_OK) {
    dev->launches = 0;
    dev->commands = 0;
    dev->operations = 0;
    dev->macs = 0;
    dev->dma_bytes = 0;
  }
  return status;
}

int32_t TVMDeviceEthosUActivate(tvm_device_ethos_u_t* dev) {
  return ethosu_step(dev, ETHOSU_POWER_IDLE, ETHOSU_POWER_ACTIVE, ETHOSU_T_ACTIVATE);
}

int32_t TVMDeviceEthosUDeactivate(tvm_device_ethos_u_t* dev) {
  return ethosu_step(dev, ETHOSU_POWER_ACTIVE, ETHOSU_POWER_IDLE, ETHOSU_T_DEACTIVATE);
}

int32_t TVMDeviceEthosUClose(tvm_device_ethos_u_t* dev) {
  return ethosu_step(dev, ETHOSU_POWER_IDLE, ETHOSU_POWER_OFF, ETHOSU_T_CLOSE);
}

int32_t TVMDeviceEthosUDestroy(tvm_device_ethos_u_t* dev) {
  if (!ethosu_live(dev) || dev->power_state != ETHOSU_POWER_OFF) return TVMD_ERR_INVALID_STATE;
  dev->transitions[ETHOSU_T_DESTROY] += 1;
  dev->magic = 0;
  return TVMD_OK;
}

const tvmd_lifecycle_t tvmd_ethosu_lifecycle = TVMD_LIFECYCLE(EthosU);
