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

/* Decode `size` bytes of stream into at most `capacity` weights (9-bit signed
 * values) in `out`.  Returns the number of weights, or -1 for a malformed or
 * truncated stream, -2 when the weights do not fit in `capacity`.  Uses no
 * memory beside `out` (a few hundred bytes of stack). */
int32_t ethosu_mlw_decode(const uint8_t* stream, uint32_t size, int16_t* out, uint32_t capacity);

/* Decode the weights numbered [skip, skip + capacity) of the stream into out[0..capacity), stopping
 * after them: what the NPU's weight decoder holds of one OFM block.  Returns skip plus the number
 * written (less than skip + capacity when the stream ends first), or -1 for a malformed or truncated
 * stream. */
int32_t ethosu_mlw_decode_window(const uint8_t* stream, uint32_t size, uint32_t skip, int16_t* out,
                                 uint32_t capacity);

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_WEIGHTS_H_ */
