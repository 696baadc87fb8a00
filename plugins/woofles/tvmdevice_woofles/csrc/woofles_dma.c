/*
 * woofles DMA engine: one FIFO ring of descriptors per stream, in the device
 * struct.  Enqueueing never moves data; descriptors retire in order when the
 * host synchronizes a stream, when a kernel launch waits for all streams, or
 * when a full ring needs room (the host then blocks on the oldest transfer,
 * as a driver does when a hardware queue is full).
 *
 * SyncStreamFromTo(src, dst) enqueues a WAIT descriptor on dst carrying the
 * sequence number src has reached; retiring it first retires src up to that
 * point.  A wait only ever names work enqueued before it, so following waits
 * always terminates.
 */
#include <string.h>

#include "woofles.h"

static int woofles_dma_powered(const tvm_device_woofles_t* dev) {
  return dev->magic == WOOFLES_MAGIC && dev->power_state != WOOFLES_POWER_OFF;
}

static int woofles_slot_ok(const tvm_device_woofles_t* dev, uint32_t slot) {
  return slot < WOOFLES_COUNT(dev->streams) && dev->streams[slot].in_use;
}

void tvmd_woofles_dma_reset(tvm_device_woofles_t* dev) {
  memset(dev->streams, 0, sizeof(dev->streams));
  dev->streams[0].in_use = 1; /* the default stream always exists while powered */
}

int32_t tvmd_woofles_stream_create(tvm_device_woofles_t* dev, uint32_t* out_slot) {
  if (!woofles_dma_powered(dev)) return TVMD_ERR_INVALID_STATE;
  for (uint32_t slot = 1; slot < WOOFLES_COUNT(dev->streams); ++slot) {
    if (!dev->streams[slot].in_use) {
      /* Sequence numbers continue across reuse of a slot, so a wait on the
       * slot's previous owner stays satisfied. */
      dev->streams[slot].in_use = 1;
      *out_slot = slot;
      return TVMD_OK;
    }
  }
  return TVMD_ERR_OUT_OF_MEMORY;
}

int32_t tvmd_woofles_stream_free(tvm_device_woofles_t* dev, uint32_t slot) {
  if (!woofles_dma_powered(dev)) return TVMD_ERR_INVALID_STATE;
  if (slot == 0 || !woofles_slot_ok(dev, slot)) return TVMD_ERR_INVALID_ARGUMENT;
  int32_t status = tvmd_woofles_stream_sync(dev, slot); /* finish its work first */
  dev->streams[slot].in_use = 0;
  return status;
}

/* Resolve one side of a transfer to a host pointer. */
static uint8_t* woofles_side(tvm_device_woofles_t* dev, uint64_t addr, uint64_t nbytes, int host) {
  if (host) return (uint8_t*)(uintptr_t)addr;
  return woofles_translate(dev, addr, nbytes);
}

static int32_t woofles_run_until(tvm_device_woofles_t* dev, uint32_t slot, uint64_t seq, uint32_t depth);

/* Nested waits can chain through at most every pending descriptor; deeper
 * means the struct was corrupted, and the engine refuses rather than recurse. */
#define WOOFLES_MAX_WAIT_DEPTH (WOOFLES_COUNT(((tvm_device_woofles_t*)0)->streams) * \
                                WOOFLES_COUNT(((tvmd_woofles_stream_t*)0)->ring))

/* Retire the oldest descriptor of a stream that has one. */
static int32_t woofles_retire_one(tvm_device_woofles_t* dev, uint32_t slot, uint32_t depth) {
  tvmd_woofles_stream_t* s = &dev->streams[slot];
  tvmd_woofles_dma_desc_t d = s->ring[s->head];
  int32_t status = TVMD_OK;
  if (d.flags & WOOFLES_DMA_WAIT) {
    status = woofles_run_until(dev, d.wait_stream, d.wait_seq, depth + 1);
  } else {
    uint8_t* src = woofles_side(dev, d.src, d.nbytes, (d.flags & WOOFLES_DMA_SRC_HOST) != 0);
    uint8_t* dst = woofles_side(dev, d.dst, d.nbytes, (d.flags & WOOFLES_DMA_DST_HOST) != 0);
    if (src == NULL || dst == NULL) {
      status = TVMD_ERR_INVALID_ARGUMENT; /* checked at enqueue; unreachable unless SRAM vanished */
    } else {
      memmove(dst, src, (size_t)d.nbytes); /* SRAM->SRAM ranges may overlap */
      uint64_t bpc = dev->dma_bytes_per_cycle;
      uint64_t cycles = (d.nbytes + bpc - 1) / bpc + WOOFLES_DMA_SETUP_CYCLES;
      woofles_account_cycles(dev, cycles);
      dev->dma_cycles += cycles;
      dev->dma_transfers += 1;
      dev->dma_bytes += d.nbytes;
    }
  }
  /* A failed descriptor is still retired: the queue never wedges. */
  s->head = (uint32_t)((s->head + 1) % WOOFLES_COUNT(s->ring));
  s->count -= 1;
  s->completed += 1;
  return status;
}

/* Retire descriptors of a stream until it has completed seq. */
static int32_t woofles_run_until(tvm_device_woofles_t* dev, uint32_t slot, uint64_t seq, uint32_t depth) {
  int32_t first_error = TVMD_OK;
  if (slot >= WOOFLES_COUNT(dev->streams) || depth > WOOFLES_MAX_WAIT_DEPTH) return TVMD_ERR_GENERIC;
  tvmd_woofles_stream_t* s = &dev->streams[slot];
  while (s->completed < seq && s->count > 0) {
    int32_t status = woofles_retire_one(dev, slot, depth);
    if (first_error == TVMD_OK) first_error = status;
  }
  return first_error;
}

static int32_t woofles_push(tvm_device_woofles_t* dev, uint32_t slot, const tvmd_woofles_dma_desc_t* d,
                            uint64_t* out_seq) {
  tvmd_woofles_stream_t* s = &dev->streams[slot];
  int32_t status = TVMD_OK;
  if (s->count == WOOFLES_COUNT(s->ring)) status = woofles_retire_one(dev, slot, 0);
  uint32_t tail = (uint32_t)((s->head + s->count) % WOOFLES_COUNT(s->ring));
  s->ring[tail] = *d;
  s->count += 1;
  s->enqueued += 1;
  if (out_seq != NULL) *out_seq = s->enqueued;
  return status;
}

int32_t tvmd_woofles_dma_enqueue(tvm_device_woofles_t* dev, uint32_t slot, uint64_t src, uint64_t dst,
                                 uint64_t nbytes, uint32_t flags, uint64_t* out_seq) {
  if (!woofles_dma_powered(dev)) return TVMD_ERR_INVALID_STATE;
  if (!woofles_slot_ok(dev, slot) || (flags & WOOFLES_DMA_WAIT)) return TVMD_ERR_INVALID_ARGUMENT;
  if (woofles_side(dev, src, nbytes, (flags & WOOFLES_DMA_SRC_HOST) != 0) == NULL ||
      woofles_side(dev, dst, nbytes, (flags & WOOFLES_DMA_DST_HOST) != 0) == NULL) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  tvmd_woofles_dma_desc_t d;
  memset(&d, 0, sizeof(d));
  d.src = src;
  d.dst = dst;
  d.nbytes = nbytes;
  d.flags = flags;
  return woofles_push(dev, slot, &d, out_seq);
}

int32_t tvmd_woofles_dma_wait_stream(tvm_device_woofles_t* dev, uint32_t src_slot, uint32_t dst_slot) {
  if (!woofles_dma_powered(dev)) return TVMD_ERR_INVALID_STATE;
  if (!woofles_slot_ok(dev, src_slot) || !woofles_slot_ok(dev, dst_slot)) return TVMD_ERR_INVALID_ARGUMENT;
  if (src_slot == dst_slot) return TVMD_OK; /* a stream is already ordered after itself */
  tvmd_woofles_dma_desc_t d;
  memset(&d, 0, sizeof(d));
  d.flags = WOOFLES_DMA_WAIT;
  d.wait_stream = src_slot;
  d.wait_seq = dev->streams[src_slot].enqueued;
  return woofles_push(dev, dst_slot, &d, NULL);
}

int32_t tvmd_woofles_stream_sync(tvm_device_woofles_t* dev, uint32_t slot) {
  if (!woofles_dma_powered(dev)) return TVMD_ERR_INVALID_STATE;
  if (!woofles_slot_ok(dev, slot)) return TVMD_ERR_INVALID_ARGUMENT;
  return woofles_run_until(dev, slot, dev->streams[slot].enqueued, 0);
}

int32_t tvmd_woofles_dma_drain(tvm_device_woofles_t* dev) {
  int32_t first_error = TVMD_OK;
  for (uint32_t slot = 0; slot < WOOFLES_COUNT(dev->streams); ++slot) {
    tvmd_woofles_stream_t* s = &dev->streams[slot];
    int32_t status = woofles_run_until(dev, slot, s->enqueued, 0);
    if (first_error == TVMD_OK) first_error = status;
  }
  return first_error;
}

/* A synchronous copy: queued on the current stream, then every stream is
 * drained, so the transfer and everything queued before it have landed. */
static int32_t woofles_copy_now(tvm_device_woofles_t* dev, uint64_t src, uint64_t dst, uint64_t nbytes,
                                uint32_t flags) {
  if (dev == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (!woofles_dma_powered(dev)) return TVMD_ERR_INVALID_STATE;
  if (nbytes == 0) return TVMD_OK;
  if (src == 0 || dst == 0) return TVMD_ERR_INVALID_ARGUMENT;
  uint64_t slot = dev->current_stream;
  if (slot >= WOOFLES_COUNT(dev->streams)) return TVMD_ERR_INVALID_ARGUMENT;
  int32_t status = tvmd_woofles_dma_enqueue(dev, (uint32_t)slot, src, dst, nbytes, flags, NULL);
  if (status != TVMD_OK) return status;
  return tvmd_woofles_dma_drain(dev);
}

int32_t TVMDeviceWooflesCopyToDevice(tvm_device_woofles_t* dev, uint64_t dst, const void* src, uint64_t nbytes) {
  return woofles_copy_now(dev, (uint64_t)(uintptr_t)src, dst, nbytes, WOOFLES_DMA_SRC_HOST);
}

int32_t TVMDeviceWooflesCopyFromDevice(tvm_device_woofles_t* dev, void* dst, uint64_t src, uint64_t nbytes) {
  return woofles_copy_now(dev, src, (uint64_t)(uintptr_t)dst, nbytes, WOOFLES_DMA_DST_HOST);
}
