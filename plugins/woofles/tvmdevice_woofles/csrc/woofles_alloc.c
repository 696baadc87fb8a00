/*
 * woofles SRAM allocator: first fit over a table of live blocks kept sorted
 * by offset, inside the device struct (no heap).  The gaps between blocks are
 * the free list; freeing a block merges its space with both neighbours by
 * construction.  Device addresses are sram_base + offset.  These are the
 * C Device API's AllocDataSpace/FreeDataSpace: the Python plugin's hooks and
 * an exported model's generated code call the same functions.
 */
#include <string.h>

#include "woofles.h"

void tvmd_woofles_alloc_reset(tvm_device_woofles_t* dev) {
  dev->num_blocks = 0;
  dev->bytes_in_use = 0;
  dev->peak_bytes_in_use = 0;
}

/* Smallest offset >= offset whose device address is a multiple of alignment. */
static uint64_t woofles_align_offset(const tvm_device_woofles_t* dev, uint64_t offset,
                                     uint64_t alignment) {
  uint64_t addr = dev->sram_base + offset;
  uint64_t aligned = (addr + alignment - 1) & ~(alignment - 1);
  return aligned - dev->sram_base;
}

int32_t TVMDeviceWooflesAllocDataSpace(tvm_device_woofles_t* dev, uint64_t nbytes, uint64_t alignment,
                                       uint64_t* out_addr) {
  if (dev == NULL || out_addr == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (dev->magic != WOOFLES_MAGIC || dev->power_state == WOOFLES_POWER_OFF) return TVMD_ERR_INVALID_STATE;
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > dev->sram_size) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  /* A zero-byte allocation still occupies one byte, so its address is unique. */
  uint64_t size = nbytes == 0 ? 1 : nbytes;
  if (size > dev->sram_size) return TVMD_ERR_OUT_OF_MEMORY;
  if (dev->num_blocks >= WOOFLES_COUNT(dev->block_offset)) return TVMD_ERR_OUT_OF_MEMORY;
  uint32_t n = dev->num_blocks;
  uint64_t gap_start = 0;
  uint32_t slot = n;
  uint64_t start = 0;
  int found = 0;
  for (uint32_t i = 0; i <= n && !found; ++i) {
    uint64_t gap_end = i < n ? dev->block_offset[i] : dev->sram_size;
    start = woofles_align_offset(dev, gap_start, alignment);
    if (start <= gap_end && size <= gap_end - start) {
      slot = i;
      found = 1;
    } else if (i < n) {
      gap_start = (uint64_t)dev->block_offset[i] + dev->block_size[i];
    }
  }
  if (!found) return TVMD_ERR_OUT_OF_MEMORY;
  memmove(&dev->block_offset[slot + 1], &dev->block_offset[slot], (n - slot) * sizeof(uint32_t));
  memmove(&dev->block_size[slot + 1], &dev->block_size[slot], (n - slot) * sizeof(uint32_t));
  dev->block_offset[slot] = (uint32_t)start;
  dev->block_size[slot] = (uint32_t)size;
  dev->num_blocks = n + 1;
  dev->bytes_in_use += size;
  if (dev->bytes_in_use > dev->peak_bytes_in_use) dev->peak_bytes_in_use = dev->bytes_in_use;
  *out_addr = dev->sram_base + start;
  return TVMD_OK;
}

int32_t TVMDeviceWooflesFreeDataSpace(tvm_device_woofles_t* dev, uint64_t addr) {
  if (dev == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (dev->magic != WOOFLES_MAGIC || dev->power_state == WOOFLES_POWER_OFF) return TVMD_ERR_INVALID_STATE;
  if (addr < dev->sram_base || addr - dev->sram_base >= dev->sram_size) return TVMD_ERR_INVALID_ARGUMENT;
  uint64_t offset = addr - dev->sram_base;
  uint32_t n = dev->num_blocks;
  for (uint32_t i = 0; i < n; ++i) {
    if (dev->block_offset[i] == offset) {
      dev->bytes_in_use -= dev->block_size[i];
      memmove(&dev->block_offset[i], &dev->block_offset[i + 1], (n - i - 1) * sizeof(uint32_t));
      memmove(&dev->block_size[i], &dev->block_size[i + 1], (n - i - 1) * sizeof(uint32_t));
      dev->num_blocks = n - 1;
      return TVMD_OK;
    }
  }
  return TVMD_ERR_INVALID_ARGUMENT; /* not the start of a live block */
}

void tvmd_woofles_alloc_stats(const tvm_device_woofles_t* dev, uint64_t* free_bytes,
                              uint64_t* largest_free) {
  uint64_t gap_start = 0, largest = 0;
  for (uint32_t i = 0; i <= dev->num_blocks; ++i) {
    uint64_t gap_end = i < dev->num_blocks ? dev->block_offset[i] : dev->sram_size;
    if (gap_end - gap_start > largest) largest = gap_end - gap_start;
    if (i < dev->num_blocks) gap_start = (uint64_t)dev->block_offset[i] + dev->block_size[i];
  }
  *free_bytes = dev->sram_size - dev->bytes_in_use;
  *largest_free = largest;
}
