/*
 * The host's weight cache (ethosu_weight_cache.h): per thread
 * (ethosu_host_thread.h, freed when the thread ends), a list of (compressed
 * stream, layout, dense weights) entries, found by comparing the stream's
 * bytes and the layout.  Dropped whole when it would pass
 * ETHOSU_WEIGHT_CACHE_BYTES, so a process that compiles many models keeps
 * only recent ones.
 */
#include <stdlib.h>
#include <string.h>

#include "ethosu_host_thread.h"
#include "ethosu_weight_cache.h"

#define ETHOSU_WEIGHT_CACHE_BYTES (64u << 20)
#define ETHOSU_LAYOUT_MAX 128u

struct ethosu_cache_entry {
  ethosu_cache_entry_t* next;
  uint32_t size, layout_size, count;
  uint8_t layout[ETHOSU_LAYOUT_MAX];
  int16_t* dense;   /* count values */
  uint8_t* stream;  /* size bytes */
};

int16_t* ethosu_weight_cache_work(uint64_t slots) {
  ethosu_host_thread_t* t = ethosu_host_thread();
  const size_t bytes = ((size_t)slots ? (size_t)slots : 1u) * sizeof(int16_t);
  if (t == NULL || slots > SIZE_MAX / sizeof(int16_t)) return NULL;
  if (bytes > t->cache_work_bytes) {
    void* grown = malloc(bytes);
    if (grown == NULL) return NULL;
    free(t->cache_work);
    t->cache_work = grown;
    t->cache_work_bytes = bytes;
  }
  return (int16_t*)t->cache_work;
}

void ethosu_weight_cache_clear(ethosu_host_thread_t* t) {
  while (t->entries != NULL) {
    ethosu_cache_entry_t* next = t->entries->next;
    free(t->entries);
    t->entries = next;
  }
  t->kept_bytes = 0;
  t->kept_entries = 0;
}

int ethosu_weight_cache_on(void) {
  const ethosu_host_thread_t* t = ethosu_host_thread();
  return t != NULL && !t->cache_off;
}

void ethosu_weight_cache_set(int on) {
  ethosu_host_thread_t* t = ethosu_host_thread();
  if (t != NULL) t->cache_off = !on;
}

uint32_t ethosu_weight_cache_entries(void) {
  const ethosu_host_thread_t* t = ethosu_host_thread();
  return t == NULL ? 0u : t->kept_entries;
}

const int16_t* ethosu_cached_weights(const uint8_t* stream, uint32_t size, const void* layout,
                                     uint32_t layout_size, uint32_t count) {
  const ethosu_host_thread_t* t = ethosu_host_thread();
  const ethosu_cache_entry_t* e;
  for (e = t == NULL ? NULL : t->entries; e != NULL; e = e->next) {
    if (e->size == size && e->count == count && e->layout_size == layout_size &&
        memcmp(e->layout, layout, layout_size) == 0 && memcmp(e->stream, stream, size) == 0) {
      return e->dense;
    }
  }
  return NULL;
}

void ethosu_keep_weights(const uint8_t* stream, uint32_t size, const void* layout, uint32_t layout_size,
                         const int16_t* dense, uint32_t count) {
  const size_t bytes = sizeof(ethosu_cache_entry_t) + (size_t)count * sizeof(int16_t) + size;
  ethosu_host_thread_t* t = ethosu_host_thread();
  ethosu_cache_entry_t* e;
  if (t == NULL || layout_size > ETHOSU_LAYOUT_MAX || bytes > ETHOSU_WEIGHT_CACHE_BYTES) return;
  if (t->kept_bytes + bytes > ETHOSU_WEIGHT_CACHE_BYTES) ethosu_weight_cache_clear(t);
  e = (ethosu_cache_entry_t*)malloc(bytes); /* one block: the entry, its weights, the stream */
  if (e == NULL) return;
  e->dense = (int16_t*)(void*)(e + 1);
  e->stream = (uint8_t*)(e->dense + count);
  e->size = size;
  e->layout_size = layout_size;
  e->count = count;
  memcpy(e->layout, layout, layout_size);
  memcpy(e->dense, dense, (size_t)count * sizeof(int16_t));
  memcpy(e->stream, stream, size);
  e->next = t->entries;
  t->entries = e;
  t->kept_bytes += bytes;
  t->kept_entries += 1;
}
