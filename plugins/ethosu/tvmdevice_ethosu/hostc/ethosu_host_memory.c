/*
 * The host extension's definitions of ethosu_memory.h: one buffer of each
 * kind per thread, grown to the largest size asked on that thread (the
 * executors of one process may run on several threads at once; the plan's
 * pools stay per executor).  An export defines the same two functions over
 * static arrays sized for its model instead; this file is never exported.
 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include <stdlib.h>

#include "ethosu_memory.h"

typedef struct {
  void* data;
  size_t bytes;
} host_buffer_t;

#if defined(__GNUC__)
#define ETHOSU_THREAD_LOCAL __thread /* the extension compiles as C99, which has no _Thread_local */
#else
#define ETHOSU_THREAD_LOCAL _Thread_local
#endif

static ETHOSU_THREAD_LOCAL host_buffer_t fast_scratch, npu_model;

static void* reserve(host_buffer_t* b, size_t bytes) {
  if (bytes > b->bytes) {
    void* grown = NULL;
    const size_t rounded = (bytes + 15u) & ~(size_t)15u;
    if (posix_memalign(&grown, 16, rounded) != 0) return NULL;
    free(b->data);
    b->data = grown;
    b->bytes = rounded;
  }
  return b->data;
}

uint8_t* tvmd_ethosu_fast_scratch(uint32_t bytes) { return (uint8_t*)reserve(&fast_scratch, bytes ? bytes : 1u); }

int16_t* tvmd_ethosu_npu_model_memory(uint32_t slots) {
  return (int16_t*)reserve(&npu_model, ((size_t)slots ? (size_t)slots : 1u) * sizeof(int16_t));
}
