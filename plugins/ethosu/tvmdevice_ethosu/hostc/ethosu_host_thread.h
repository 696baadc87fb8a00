/*
 * What the host extension keeps per thread for the functional model: the
 * buffers of ethosu_memory.h and the weight cache (ethosu_weight_cache.h).
 * Freed when the thread ends (a pthread key's destructor), so executors run
 * on short-lived threads leave nothing behind.  Host only; never exported.
 */
#ifndef TVMDEVICE_ETHOSU_HOST_THREAD_H_
#define TVMDEVICE_ETHOSU_HOST_THREAD_H_

#include <stddef.h>
#include <stdint.h>

typedef struct ethosu_cache_entry ethosu_cache_entry_t;

typedef struct {
  void* fast_scratch;
  size_t fast_scratch_bytes;
  void* npu_model;
  size_t npu_model_bytes;
  void* cache_work; /* where the weight cache decodes an operation's weights whole */
  size_t cache_work_bytes;
  ethosu_cache_entry_t* entries; /* the weight cache, newest first */
  size_t kept_bytes;
  uint32_t kept_entries;
  int cache_off; /* the thread decodes per OFM block, as an export does */
} ethosu_host_thread_t;

/* The calling thread's state (created zeroed on first use), or NULL when out of memory. */
ethosu_host_thread_t* ethosu_host_thread(void);

/* Drop the thread's weight cache (ethosu_weight_cache.c). */
void ethosu_weight_cache_clear(ethosu_host_thread_t* t);

#endif /* TVMDEVICE_ETHOSU_HOST_THREAD_H_ */
