/*
 * Decoder of Vela's compressed weight stream (the "mlw" format the Ethos-U55
 * and U65 weight decoder reads; Vela's ethosu.mlw_codec encodes it).
 */
#ifndef TVMDEVICE_ETHOSU_WEIGHTS_H_
#define TVMDEVICE_ETHOSU_WEIGHTS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest slice: SLICELEN is 15 bits, plus one. */
#define ETHOSU_MLW_MAX_SLICE 32768
/* int32 words of workspace ethosu_mlw_decode needs: the weight and zero-run values of one slice. */
#define ETHOSU_MLW_WORKSPACE (2 * (ETHOSU_MLW_MAX_SLICE + 1))

/* Decode `size` bytes of stream into at most `capacity` weights (9-bit signed
 * values) in `out`, using `work` (ETHOSU_MLW_WORKSPACE words).  Returns the
 * number of weights, or -1 for a malformed or truncated stream, -2 when the
 * weights do not fit in `capacity`. */
int32_t ethosu_mlw_decode(const uint8_t* stream, uint32_t size, int16_t* out, uint32_t capacity, int32_t* work);

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_WEIGHTS_H_ */
