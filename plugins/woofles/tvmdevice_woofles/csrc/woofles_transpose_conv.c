/*
 * TRANSPOSE_CONV on the woofles MAC array, int8, per-channel requantization;
 * bit-exact with TFLM's reference_integer_ops::TransposeConv.
 *
 * Dataflow: output stationary, as for CONV_2D.  For each output pixel the
 * array holds a tile of up to mac_width output channels; the address
 * generator visits the taps whose input pixel lands on it (iy * stride -
 * pad + ky == oy), so TFLM's scatter into a scratch image becomes a gather
 * and needs no scratch.  The accumulators wrap like TFLM's int32 ones; a
 * wrapping sum does not depend on its order.  Every tap costs its cycle,
 * landing or not.
 */
#include "woofles_kernels.h"
#include "woofles_tile.h"

int32_t tvmd_woofles_transpose_conv_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_woofles_transpose_conv_params_t* p = (const tvmd_woofles_transpose_conv_params_t*)params;
  tvm_device_woofles_t* dev = (tvm_device_woofles_t*)resource_handle;
  if (p == NULL || buffers == NULL || dev == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  int32_t status = woofles_kernel_begin(dev);
  if (status != TVMD_OK) return status;
  if ((p->num_inputs != 3 && p->num_inputs != 4) || p->batches <= 0 || p->in_h <= 0 || p->in_w <= 0 ||
      p->in_ch <= 0 || p->out_h <= 0 || p->out_w <= 0 || p->out_ch <= 0 || p->filter_h <= 0 || p->filter_w <= 0 ||
      p->stride_h <= 0 || p->stride_w <= 0 || p->pad_h < 0 || p->pad_w < 0 || p->multiplier == NULL ||
      p->shift == NULL) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  const size_t taps = (size_t)p->filter_h * p->filter_w * p->in_ch; /* weights per out channel */
  const int8_t* filter = (const int8_t*)woofles_buffer(dev, buffers, 1, (uint64_t)p->out_ch * taps);
  const int8_t* input =
      (const int8_t*)woofles_buffer(dev, buffers, 2, (uint64_t)p->batches * p->in_h * p->in_w * p->in_ch);
  int8_t* output =
      (int8_t*)woofles_buffer(dev, buffers, p->num_inputs, (uint64_t)p->batches * p->out_h * p->out_w * p->out_ch);
  const uint8_t* bias = NULL;
  if (p->num_inputs == 4 && buffers[3] != NULL) {
    bias = woofles_buffer(dev, buffers, 3, (uint64_t)p->out_ch * sizeof(int32_t));
    if (bias == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  }
  if (filter == NULL || input == NULL || output == NULL) return TVMD_ERR_INVALID_ARGUMENT;

  const int32_t width = (int32_t)dev->mac_width;
  uint32_t acc[WOOFLES_MAX_MAC_WIDTH];
  uint64_t tiles = 0;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        int8_t* out_px = output + (((size_t)b * p->out_h + oy) * p->out_w + ox) * p->out_ch;
        for (int32_t c0 = 0; c0 < p->out_ch; c0 += width) {
          const int32_t lanes = woofles_min_i32(width, p->out_ch - c0);
          memset(acc, 0, (size_t)lanes * sizeof(acc[0]));
          for (int32_t ky = 0; ky < p->filter_h; ++ky) {
            const int32_t ty = oy + p->pad_h - ky;
            if (ty < 0 || ty % p->stride_h != 0 || ty / p->stride_h >= p->in_h) continue;
            for (int32_t kx = 0; kx < p->filter_w; ++kx) {
              const int32_t tx = ox + p->pad_w - kx;
              if (tx < 0 || tx % p->stride_w != 0 || tx / p->stride_w >= p->in_w) continue;
              const int8_t* in_px =
                  input + (((size_t)b * p->in_h + ty / p->stride_h) * p->in_w + tx / p->stride_w) * p->in_ch;
              /* Filter is OHWI: lane l's weights start at (c0 + l) * taps. */
              const int8_t* w_tap = filter + (size_t)c0 * taps + ((size_t)ky * p->filter_w + kx) * p->in_ch;
              for (int32_t ic = 0; ic < p->in_ch; ++ic) {
                const int32_t x = in_px[ic] + p->input_offset; /* broadcast to every lane */
                for (int32_t l = 0; l < lanes; ++l) acc[l] = woofles_mac(acc[l], x, w_tap[(size_t)l * taps + ic]);
              }
            }
          }
          woofles_store_tile(acc, lanes, c0, bias, p->multiplier, p->shift, p->output_offset, p->act_min,
                             p->act_max, out_px);
          ++tiles;
        }
      }
    }
  }
  woofles_kernel_end(dev, tiles * (taps + WOOFLES_TILE_OVERHEAD));
  return TVMD_OK;
}
