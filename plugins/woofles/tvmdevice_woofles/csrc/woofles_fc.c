/*
 * FULLY_CONNECTED on the woofles MAC array, int8; bit-exact with TFLM's
 * reference FullyConnected (per-tensor weights, with a weights zero point)
 * and FullyConnectedPerChannel (per-channel weights, zero point 0).
 *
 * Dataflow: output stationary.  Each tile holds up to mac_width output
 * neurons of one batch row; every cycle one input value is broadcast to all
 * lanes and meets one weight per lane.
 */
#include "woofles_kernels.h"
#include "woofles_tile.h"

int32_t tvmd_woofles_fully_connected_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_woofles_fc_params_t* p = (const tvmd_woofles_fc_params_t*)params;
  tvm_device_woofles_t* dev = (tvm_device_woofles_t*)resource_handle;
  if (p == NULL || buffers == NULL || dev == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  int32_t status = woofles_kernel_begin(dev);
  if (status != TVMD_OK) return status;
  if (p->batches <= 0 || p->accum_depth <= 0 || p->out_ch <= 0 || (p->num_inputs != 2 && p->num_inputs != 3) ||
      p->multiplier == NULL || p->shift == NULL) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  const size_t depth = (size_t)p->accum_depth;
  const int8_t* input = (const int8_t*)woofles_buffer(dev, buffers, 0, (uint64_t)p->batches * depth);
  const int8_t* weights = (const int8_t*)woofles_buffer(dev, buffers, 1, (uint64_t)p->out_ch * depth);
  int8_t* output = (int8_t*)woofles_buffer(dev, buffers, p->num_inputs, (uint64_t)p->batches * p->out_ch);
  const uint8_t* bias = NULL;
  if (p->num_inputs == 3 && buffers[2] != NULL) {
    bias = woofles_buffer(dev, buffers, 2, (uint64_t)p->out_ch * sizeof(int32_t));
    if (bias == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  }
  if (input == NULL || weights == NULL || output == NULL) return TVMD_ERR_INVALID_ARGUMENT;

  const int32_t width = (int32_t)dev->mac_width;
  uint32_t acc[WOOFLES_MAX_MAC_WIDTH];
  uint64_t tiles = 0;
  for (int32_t b = 0; b < p->batches; ++b) {
    const int8_t* row = input + (size_t)b * depth;
    int8_t* out_row = output + (size_t)b * p->out_ch;
    for (int32_t c0 = 0; c0 < p->out_ch; c0 += width) {
      const int32_t lanes = woofles_min_i32(width, p->out_ch - c0);
      const int8_t* w_tile = weights + (size_t)c0 * depth;
      memset(acc, 0, (size_t)lanes * sizeof(acc[0]));
      for (size_t d = 0; d < depth; ++d) {
        const int32_t x = row[d] + p->input_offset; /* broadcast to every lane */
        for (int32_t l = 0; l < lanes; ++l) {
          acc[l] = woofles_mac(acc[l], x, w_tile[(size_t)l * depth + d] + p->filter_offset);
        }
      }
      woofles_store_tile(acc, lanes, c0, bias, p->multiplier, p->shift, p->output_offset, p->act_min, p->act_max,
                         out_row);
      ++tiles;
    }
  }
  woofles_kernel_end(dev, tiles * (depth + WOOFLES_TILE_OVERHEAD));
  return TVMD_OK;
}
