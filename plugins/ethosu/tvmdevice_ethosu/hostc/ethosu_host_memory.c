/*
 * The host extension's definitions of ethosu_memory.h: one buffer of each
 * kind per thread (ethosu_host_thread.h), grown to the largest size asked on
 * that thread (the executors of one process may run on several threads at
 * once; the plan's pools stay per executor) and freed when the thread ends.
 * An export defines the same two functions over static arrays sized for its
 * model instead; this file is never exported.
 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign, pthread */
#include <pthread.h>
#include <stdlib.h>

#include "ethosu_host_thread.h"
#include "ethosu_memory.h"

static pthread_key_t thread_key;
static pthread_once_t thread_once = PTHREAD_ONCE_INIT;
static int thread_key_ok;

static void thread_end(void* p) {
  ethosu_host_thread_t* t = (ethosu_host_thread_t*)p;
  ethosu_weight_cache_clear(t);
  free(t->fast_scratch);
  free(t->npu_model);
  free(t->cache_work);
  free(t);
}

static void make_key(void) { thread_key_ok = pthread_key_create(&thread_key, thread_end) == 0; }

ethosu_host_thread_t* ethosu_host_thread(void) {
  ethosu_host_thread_t* t;
  if (pthread_once(&thread_once, make_key) != 0 || !thread_key_ok) return NULL;
  t = (ethosu_host_thread_t*)pthread_getspecific(thread_key);
  if (t == NULL) {
    t = (ethosu_host_thread_t*)calloc(1, sizeof(*t));
    if (t == NULL) return NULL;
    if (pthread_setspecific(thread_key, t) != 0) {
      free(t);
      return NULL;
    }
  }
  return t;
}

static void* reserve(void** data, size_t* have, size_t bytes) {
  if (bytes > *have) {
    void* grown = NULL;
    const size_t rounded = (bytes + 15u) & ~(size_t)15u;
    if (posix_memalign(&grown, 16, rounded) != 0) return NULL;
    free(*data);
    *data = grown;
    *have = rounded;
  }
  return *data;
}

uint8_t* tvmd_ethosu_fast_scratch(uint32_t bytes) {
  ethosu_host_thread_t* t = ethosu_host_thread();
  if (t == NULL) return NULL;
  return (uint8_t*)reserve(&t->fast_scratch, &t->fast_scratch_bytes, bytes ? bytes : 1u);
}

int16_t* tvmd_ethosu_npu_model_memory(uint32_t slots) {
  ethosu_host_thread_t* t = ethosu_host_thread();
  if (t == NULL) return NULL;
  return (int16_t*)reserve(&t->npu_model, &t->npu_model_bytes,
                           ((size_t)slots ? (size_t)slots : 1u) * sizeof(int16_t));
}
