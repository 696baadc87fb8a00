/*
 * FULLY_CONNECTED on the woofles MAC array with int16 activations and int8
 * weights (int16x8); bit-exact with TFLM's reference_integer_ops
 * FullyConnected (per-tensor weights, with the weights offset) and
 * FullyConnectedPerChannel for int16.  No input or output offset (zero
 * points 0); accumulators as wide as the bias (bias_bits, woofles_wide.h).
 * Dataflow as the int8 kernel; a 16x8 MAC costs WOOFLES_INT16_RATE cycles.
 */
#include "woofles_kernels.h"
#include "woofles_wide.h"

int32_t tvmd_woofles_fully_connected_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_woofles_fc16_params_t* p = (const tvmd_woofles_fc16_params_t*)params;
  tvm_device_woofles_t* dev = (tvm_device_woofles_t*)resource_handle;
  if (p == NULL || buffers == NULL || dev == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  int32_t status = woofles_kernel_begin(dev);
  if (status != TVMD_OK) return status;
  if (p->batches <= 0 || p->accum_depth <= 0 || p->out_ch <= 0 || (p->num_inputs != 2 && p->num_inputs != 3) ||
      p->multiplier == NULL || p->shift == NULL || (p->bias_bits != 32 && p->bias_bits != 64)) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  const size_t depth = (size_t)p->accum_depth;
  const uint8_t* input = woofles_buffer(dev, buffers, 0, (uint64_t)p->batches * depth * 2u);
  const int8_t* weights = (const int8_t*)woofles_buffer(dev, buffers, 1, (uint64_t)p->out_ch * depth);
  uint8_t* output = woofles_buffer(dev, buffers, p->num_inputs, (uint64_t)p->batches * p->out_ch * 2u);
  const uint8_t* bias = NULL;
  if (p->num_inputs == 3 && buffers[2] != NULL) {
    bias = woofles_buffer(dev, buffers, 2, (uint64_t)p->out_ch * (uint64_t)(p->bias_bits / 8));
    if (bias == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  }
  if (input == NULL || weights == NULL || output == NULL) return TVMD_ERR_INVALID_ARGUMENT;

  const int32_t width = (int32_t)dev->mac_width;
  uint64_t acc[WOOFLES_MAX_MAC_WIDTH];
  uint64_t tiles = 0;
  for (int32_t b = 0; b < p->batches; ++b) {
    const size_t row = (size_t)b * depth;
    uint8_t* out_row = output + (size_t)b * p->out_ch * 2u;
    for (int32_t c0 = 0; c0 < p->out_ch; c0 += width) {
      const int32_t lanes = woofles_min_i32(width, p->out_ch - c0);
      const int8_t* w_tile = weights + (size_t)c0 * depth;
      memset(acc, 0, (size_t)lanes * sizeof(acc[0]));
      for (size_t d = 0; d < depth; ++d) {
        const int32_t x = woofles_load_elem(input, row + d, 1); /* broadcast to every lane */
        for (int32_t l = 0; l < lanes; ++l) {
          acc[l] += (uint64_t)(int64_t)(x * (w_tile[(size_t)l * depth + d] + p->filter_offset));
        }
      }
      woofles_store_tile16(acc, lanes, c0, bias, p->bias_bits, p->multiplier, p->shift, p->act_min, p->act_max,
                           out_row);
      ++tiles;
    }
  }
  woofles_kernel_end(dev, tiles * (depth * WOOFLES_INT16_RATE + WOOFLES_TILE_OVERHEAD));
  return TVMD_OK;
}
