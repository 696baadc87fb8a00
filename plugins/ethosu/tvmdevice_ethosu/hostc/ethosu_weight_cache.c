/*
 * The host's weight cache (ethosu_weight_cache.h): per thread, a list of
 * (compressed stream, layout, dense weights) entries, found by comparing the
 * stream's bytes and the layout.  Dropped whole when it would pass
 * ETHOSU_WEIGHT_CACHE_BYTES, so a process that compiles many models keeps
 * only recent ones.
 */
#include <stdlib.h>
#include <string.h>

#include "ethosu_weight_cache.h"

#if defined(__GNUC__)
#define ETHOSU_THREAD_LOCAL __thread /* the extension compiles as C99, which has no _Thread_local */
#else
#define ETHOSU_THREAD_LOCAL _Thread_local
#endif

#define ETHOSU_WEIGHT_CACHE_BYTES (64u << 20)
#define ETHOSU_LAYOUT_MAX 128u

typedef struct entry {
  struct entry* next;
  uint32_t size, layout_size, count;
  uint8_t layout[ETHOSU_LAYOUT_MAX];
  int16_t* dense;   /* count values */
  uint8_t* stream;  /* size bytes */
} entry_t;

static ETHOSU_THREAD_LOCAL entry_t* entries;
static ETHOSU_THREAD_LOCAL size_t kept_bytes;
static ETHOSU_THREAD_LOCAL uint32_t kept_entries;

static void drop_all(void) {
  while (entries != NULL) {
    entry_t* next = entries->next;
    free(entries);
    entries = next;
  }
  kept_bytes = 0;
  kept_entries = 0;
}

uint32_t ethosu_weight_cache_entries(void) { return kept_entries; }

const int16_t* ethosu_cached_weights(const uint8_t* stream, uint32_t size, const void* layout,
                                     uint32_t layout_size, uint32_t count) {
  const entry_t* e;
  for (e = entries; e != NULL; e = e->next) {
    if (e->size == size && e->count == count && e->layout_size == layout_size &&
        memcmp(e->layout, layout, layout_size) == 0 && memcmp(e->stream, stream, size) == 0) {
      return e->dense;
    }
  }
  return NULL;
}

void ethosu_keep_weights(const uint8_t* stream, uint32_t size, const void* layout, uint32_t layout_size,
                         const int16_t* dense, uint32_t count) {
  const size_t bytes = sizeof(entry_t) + (size_t)count * sizeof(int16_t) + size;
  entry_t* e;
  if (layout_size > ETHOSU_LAYOUT_MAX || bytes > ETHOSU_WEIGHT_CACHE_BYTES) return;
  if (kept_bytes + bytes > ETHOSU_WEIGHT_CACHE_BYTES) drop_all();
  e = (entry_t*)malloc(bytes); /* one block: the entry, its weights (2-aligned after it), the stream */
  if (e == NULL) return;
  e->dense = (int16_t*)(void*)(e + 1);
  e->stream = (uint8_t*)(e->dense + count);
  e->size = size;
  e->layout_size = layout_size;
  e->count = count;
  memcpy(e->layout, layout, layout_size);
  memcpy(e->dense, dense, (size_t)count * sizeof(int16_t));
  memcpy(e->stream, stream, size);
  e->next = entries;
  entries = e;
  kept_bytes += bytes;
  kept_entries += 1;
}
