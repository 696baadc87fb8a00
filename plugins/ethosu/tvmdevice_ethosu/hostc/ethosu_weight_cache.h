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

/* The weight streams kept on the calling thread. */
uint32_t ethosu_weight_cache_entries(void);

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_WEIGHT_CACHE_H_ */
