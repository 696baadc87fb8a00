/*
 * woofles lifecycle: the TVMDeviceWoofles<Hook> functions of the generated
 * header, enforcing the device's own power-state machine
 *
 *   (zeroed) --Init--> OFF --Configure--> OFF --Open--> SLEEP --Activate--> ACTIVE
 *   (zeroed) <-Destroy- OFF <--Close-- SLEEP <-Deactivate-- ACTIVE
 *
 * independently of the host framework's checks: a firmware linking this file
 * gets the same refusals.  Configure (after Init, before Open) sets what the
 * target options decide, and may hand over the memory backing the SRAM (a
 * firmware's static array); the Python host hands its backing over in
 * sram_host before each Open instead.  Nothing here allocates.
 */
#include <string.h>

#include "woofles.h"

void woofles_account_cycles(tvm_device_woofles_t* dev, uint64_t cycles) {
  dev->cycles_total += cycles;
  dev->cycles_run += cycles;
  dev->cycles_last_call = cycles;
  if (dev->power_state < WOOFLES_COUNT(dev->cycles_in_state)) {
    dev->cycles_in_state[dev->power_state] += cycles;
  }
}

static int woofles_live(const tvm_device_woofles_t* dev) {
  return dev != NULL && dev->magic == WOOFLES_MAGIC;
}

/* The configuration a Configure set is one the hardware can have: SRAM
 * offsets are 32-bit, the window does not wrap, the MAC tile fits. */
static int woofles_config_ok(uint64_t sram_base, uint64_t sram_size, uint32_t mac_width,
                             uint32_t dma_bytes_per_cycle, uint32_t clock_mhz) {
  return mac_width != 0 && mac_width <= WOOFLES_MAX_MAC_WIDTH && dma_bytes_per_cycle != 0 && clock_mhz != 0 &&
         sram_size != 0 && sram_size <= UINT32_MAX && sram_base != 0 && sram_base <= UINT64_MAX - sram_size;
}

int32_t TVMDeviceWooflesInit(tvm_device_woofles_t* dev) {
  if (dev == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (dev->magic == WOOFLES_MAGIC) return TVMD_ERR_INVALID_STATE; /* already initialized */
  dev->magic = WOOFLES_MAGIC;
  dev->api_version = TVMD_DEVICE_API_VERSION;
  dev->power_state = WOOFLES_POWER_OFF;
  dev->sram_host = NULL;
  dev->transitions[WOOFLES_T_INIT] += 1;
  return TVMD_OK;
}

int32_t TVMDeviceWooflesConfigure(tvm_device_woofles_t* dev, const tvmd_woofles_config_t* config) {
  if (dev == NULL || config == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (!woofles_live(dev) || dev->power_state != WOOFLES_POWER_OFF) return TVMD_ERR_INVALID_STATE;
  if (!woofles_config_ok(config->sram_base, config->sram_size, config->mac_width, config->dma_bytes_per_cycle,
                         config->clock_mhz)) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  dev->sram_base = config->sram_base;
  dev->sram_size = config->sram_size;
  dev->mac_width = config->mac_width;
  dev->dma_bytes_per_cycle = config->dma_bytes_per_cycle;
  dev->clock_mhz = config->clock_mhz;
  dev->sram_host = config->sram_host;
  return TVMD_OK;
}

int32_t TVMDeviceWooflesOpen(tvm_device_woofles_t* dev) {
  if (!woofles_live(dev)) return TVMD_ERR_INVALID_STATE;
  if (dev->power_state != WOOFLES_POWER_OFF) return TVMD_ERR_INVALID_STATE;
  if (!woofles_config_ok(dev->sram_base, dev->sram_size, dev->mac_width, dev->dma_bytes_per_cycle,
                         dev->clock_mhz)) {
    return TVMD_ERR_INVALID_ARGUMENT; /* not configured */
  }
  if (dev->sram_host == NULL) return TVMD_ERR_INVALID_ARGUMENT; /* no backing memory */
  /* A freshly powered SRAM reads as zeros. */
  memset(dev->sram_host, 0, (size_t)dev->sram_size);
  tvmd_woofles_alloc_reset(dev);
  tvmd_woofles_dma_reset(dev);
  dev->current_stream = 0;
  dev->power_state = WOOFLES_POWER_SLEEP;
  dev->transitions[WOOFLES_T_OPEN] += 1;
  return TVMD_OK;
}

int32_t TVMDeviceWooflesActivate(tvm_device_woofles_t* dev) {
  if (!woofles_live(dev) || dev->power_state != WOOFLES_POWER_SLEEP) return TVMD_ERR_INVALID_STATE;
  dev->power_state = WOOFLES_POWER_ACTIVE;
  /* A run's cycles start with the wake-up it paid for. */
  dev->cycles_run = 0;
  woofles_account_cycles(dev, WOOFLES_WAKE_CYCLES);
  dev->transitions[WOOFLES_T_ACTIVATE] += 1;
  return TVMD_OK;
}

int32_t TVMDeviceWooflesDeactivate(tvm_device_woofles_t* dev) {
  if (!woofles_live(dev) || dev->power_state != WOOFLES_POWER_ACTIVE) return TVMD_ERR_INVALID_STATE;
  /* Queued DMA keeps going in SLEEP: the DMA engine sits in the SRAM power
   * domain, and SRAM (with its contents) stays powered. */
  dev->power_state = WOOFLES_POWER_SLEEP;
  dev->transitions[WOOFLES_T_DEACTIVATE] += 1;
  return TVMD_OK;
}

int32_t TVMDeviceWooflesClose(tvm_device_woofles_t* dev) {
  if (!woofles_live(dev) || dev->power_state != WOOFLES_POWER_SLEEP) return TVMD_ERR_INVALID_STATE;
  /* Finish what was queued (downloads land in host memory) before the
   * SRAM loses power. */
  int32_t status = tvmd_woofles_dma_drain(dev);
  tvmd_woofles_dma_reset(dev);
  tvmd_woofles_alloc_reset(dev);
  dev->current_stream = 0;
  /* sram_host stays: the backing memory is its owner's (a firmware's static
   * array is reused by the next Open; the Python host clears the pointer
   * when it lets go of its buffer). */
  dev->power_state = WOOFLES_POWER_OFF;
  dev->transitions[WOOFLES_T_CLOSE] += 1;
  return status;
}

int32_t TVMDeviceWooflesDestroy(tvm_device_woofles_t* dev) {
  if (!woofles_live(dev) || dev->power_state != WOOFLES_POWER_OFF) return TVMD_ERR_INVALID_STATE;
  dev->magic = 0;
  dev->transitions[WOOFLES_T_DESTROY] += 1;
  return TVMD_OK;
}

int32_t woofles_kernel_begin(tvm_device_woofles_t* dev) {
  if (!woofles_live(dev)) return TVMD_ERR_INVALID_ARGUMENT;
  if (dev->power_state != WOOFLES_POWER_ACTIVE) return TVMD_ERR_INVALID_STATE;
  if (dev->mac_width == 0 || dev->mac_width > WOOFLES_MAX_MAC_WIDTH) return TVMD_ERR_INVALID_ARGUMENT;
  /* The compute engine waits on every DMA queue: uploads issued before the
   * launch are visible to it without a host-side StreamSync. */
  return tvmd_woofles_dma_drain(dev);
}

void woofles_kernel_end(tvm_device_woofles_t* dev, uint64_t cycles) {
  cycles += WOOFLES_LAUNCH_CYCLES;
  woofles_account_cycles(dev, cycles);
  dev->kernel_cycles += cycles;
  dev->kernel_calls += 1;
}
