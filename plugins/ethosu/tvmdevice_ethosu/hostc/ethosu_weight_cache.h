/*
 * The host's weight cache: the functional model on the host decodes each
 * compressed weight stream once (the read-only region never changes), where
 * the NPU's weight decoder, and an export's functional model, decode it every
 * time the operation runs.  Compiled into the host extension only (with
 * TVMD_ETHOSU_WEIGHT_CACHE); never exported.
 */
#ifndef TVMDEVICE_ETHOSU_WEIGHT_CACHE_H_
#define TVMDEVICE_ETHOSU_WEIGHT_CACHE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The `count` dense weights kept for these `size` bytes of compressed stream laid out as `layout`
 * (`layout_size` bytes, compared whole), or NULL.  The bytes are compared, not their address. */
const int16_t* ethosu_cached_weights(const uint8_t* stream, uint32_t size, const void* layout,
                                     uint32_t layout_size, uint32_t count);

/* Keep `count` dense weights decoded from `stream` laid out as `layout` (nothing when out of memory). */
void ethosu_keep_weights(const uint8_t* stream, uint32_t size, const void* layout, uint32_t layout_size,
                         const int16_t* dense, uint32_t count);

/* Memory for decoding one operation's weights whole (`slots` int16 values) before keeping them: the
 * calling thread's, grown as needed; NULL when out of memory. */
int16_t* ethosu_weight_cache_work(uint64_t slots);

/* Whether the calling thread uses the cache (on unless turned off): off, the functional model
 * decodes each OFM block's weights when it runs, as an export does (what tests of that path use). */
int ethosu_weight_cache_on(void);
void ethosu_weight_cache_set(int on);

/* The weight streams kept on the calling thread. */
uint32_t ethosu_weight_cache_entries(void);

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_WEIGHT_CACHE_H_ */
