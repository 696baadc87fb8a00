/*
 * CONV_2D and DEPTHWISE_CONV_2D on the woofles MAC array with int16
 * activations and int8 filters (int16x8); bit-exact with TFLM's
 * reference_integer_ops ConvPerChannel and DepthwiseConvPerChannel for int16.
 *
 * Zero points are 0 (no offsets).  The accumulators are as wide as the
 * bias (bias_bits 64 needs -acc_bits=64; checked in Python): each output is
 * the wrapping sum of input * filter plus the bias, requantized in that
 * width (woofles_wide.h).  Same dataflow as the int8 kernels (output
 * stationary, the window loader's border skipped); a 16x8 MAC costs
 * WOOFLES_INT16_RATE cycles.
 */
#include "woofles_kernels.h"
#include "woofles_wide.h"

typedef struct {
  const uint8_t* input;
  const int8_t* filter;
  const uint8_t* bias; /* NULL when absent */
  uint8_t* output;
} woofles_conv16_io_t;

static int32_t woofles_conv16_io(const tvm_device_woofles_t* dev, const tvmd_woofles_conv16_params_t* p,
                                 void* const* buffers, uint64_t filter_elems, woofles_conv16_io_t* io) {
  const uint64_t in_bytes = (uint64_t)p->batches * p->in_h * p->in_w * p->in_ch * 2u;
  const uint64_t out_bytes = (uint64_t)p->batches * p->out_h * p->out_w * p->out_ch * 2u;
  if (p->num_inputs != 2 && p->num_inputs != 3) return TVMD_ERR_INVALID_ARGUMENT;
  if (p->batches <= 0 || p->in_h <= 0 || p->in_w <= 0 || p->in_ch <= 0 || p->out_h <= 0 || p->out_w <= 0 ||
      p->out_ch <= 0 || p->filter_h <= 0 || p->filter_w <= 0 || p->stride_h <= 0 || p->stride_w <= 0 ||
      p->dilation_h <= 0 || p->dilation_w <= 0 || p->pad_h < 0 || p->pad_w < 0 || p->multiplier == NULL ||
      p->shift == NULL || (p->bias_bits != 32 && p->bias_bits != 64)) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  io->input = woofles_buffer(dev, buffers, 0, in_bytes);
  io->filter = (const int8_t*)woofles_buffer(dev, buffers, 1, filter_elems);
  io->output = woofles_buffer(dev, buffers, p->num_inputs, out_bytes);
  io->bias = NULL;
  if (p->num_inputs == 3 && buffers[2] != NULL) {
    io->bias = woofles_buffer(dev, buffers, 2, (uint64_t)p->out_ch * (uint64_t)(p->bias_bits / 8));
    if (io->bias == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  }
  if (io->input == NULL || io->filter == NULL || io->output == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  return TVMD_OK;
}

static inline uint64_t woofles_mac16(uint64_t acc, int32_t x, int32_t w) {
  return acc + (uint64_t)(int64_t)(x * w); /* |x * w| < 2^23: no overflow */
}

int32_t tvmd_woofles_conv2d_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_woofles_conv16_params_t* p = (const tvmd_woofles_conv16_params_t*)params;
  tvm_device_woofles_t* dev = (tvm_device_woofles_t*)resource_handle;
  if (p == NULL || buffers == NULL || dev == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  int32_t status = woofles_kernel_begin(dev);
  if (status != TVMD_OK) return status;
  if (p->filter_in_ch <= 0 || p->in_ch % p->filter_in_ch != 0) return TVMD_ERR_INVALID_ARGUMENT;
  const int32_t groups = p->in_ch / p->filter_in_ch;
  if (p->out_ch % groups != 0) return TVMD_ERR_INVALID_ARGUMENT;
  const int32_t per_group = p->out_ch / groups;
  const size_t taps = (size_t)p->filter_h * p->filter_w * p->filter_in_ch;
  woofles_conv16_io_t io;
  status = woofles_conv16_io(dev, p, buffers, (uint64_t)p->out_ch * taps, &io);
  if (status != TVMD_OK) return status;

  const woofles_window_t win = {p->in_h, p->in_w, p->in_ch, 2};
  const int32_t width = (int32_t)dev->mac_width;
  uint64_t acc[WOOFLES_MAX_MAC_WIDTH];
  uint64_t tiles = 0;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h;
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        uint8_t* out_px = io.output + (((size_t)b * p->out_h + oy) * p->out_w + ox) * p->out_ch * 2u;
        for (int32_t g = 0; g < groups; ++g) {
          const int32_t group_end = (g + 1) * per_group;
          for (int32_t c0 = g * per_group; c0 < group_end; c0 += width) {
            const int32_t lanes = woofles_min_i32(width, group_end - c0);
            memset(acc, 0, (size_t)lanes * sizeof(acc[0]));
            for (int32_t ky = 0; ky < p->filter_h; ++ky) {
              for (int32_t kx = 0; kx < p->filter_w; ++kx) {
                const uint8_t* px = woofles_window_pixel(io.input, &win, b, iy0 + ky * p->dilation_h,
                                                         ix0 + kx * p->dilation_w);
                if (px == NULL) continue; /* border: zero point 0 adds nothing */
                const int8_t* w_tap = io.filter + (size_t)c0 * taps + ((size_t)ky * p->filter_w + kx) * p->filter_in_ch;
                for (int32_t ic = 0; ic < p->filter_in_ch; ++ic) {
                  const int32_t x = woofles_load_elem(px, (size_t)g * p->filter_in_ch + (size_t)ic, 1);
                  for (int32_t l = 0; l < lanes; ++l) acc[l] = woofles_mac16(acc[l], x, w_tap[(size_t)l * taps + ic]);
                }
              }
            }
            woofles_store_tile16(acc, lanes, c0, io.bias, p->bias_bits, p->multiplier, p->shift, p->act_min,
                                 p->act_max, out_px);
            ++tiles;
          }
        }
      }
    }
  }
  woofles_kernel_end(dev, tiles * (taps * WOOFLES_INT16_RATE + WOOFLES_TILE_OVERHEAD));
  return TVMD_OK;
}

int32_t tvmd_woofles_depthwise_conv2d_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_woofles_conv16_params_t* p = (const tvmd_woofles_conv16_params_t*)params;
  tvm_device_woofles_t* dev = (tvm_device_woofles_t*)resource_handle;
  if (p == NULL || buffers == NULL || dev == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  int32_t status = woofles_kernel_begin(dev);
  if (status != TVMD_OK) return status;
  if (p->depth_multiplier <= 0 || p->out_ch != p->in_ch * p->depth_multiplier) return TVMD_ERR_INVALID_ARGUMENT;
  const size_t window = (size_t)p->filter_h * p->filter_w;
  woofles_conv16_io_t io;
  status = woofles_conv16_io(dev, p, buffers, (uint64_t)window * p->out_ch, &io);
  if (status != TVMD_OK) return status;

  const woofles_window_t win = {p->in_h, p->in_w, p->in_ch, 2};
  const int32_t width = (int32_t)dev->mac_width;
  uint64_t acc[WOOFLES_MAX_MAC_WIDTH];
  uint64_t tiles = 0;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h;
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        uint8_t* out_px = io.output + (((size_t)b * p->out_h + oy) * p->out_w + ox) * p->out_ch * 2u;
        for (int32_t c0 = 0; c0 < p->out_ch; c0 += width) {
          const int32_t lanes = woofles_min_i32(width, p->out_ch - c0);
          memset(acc, 0, (size_t)lanes * sizeof(acc[0]));
          for (int32_t ky = 0; ky < p->filter_h; ++ky) {
            for (int32_t kx = 0; kx < p->filter_w; ++kx) {
              const uint8_t* px = woofles_window_pixel(io.input, &win, b, iy0 + ky * p->dilation_h,
                                                       ix0 + kx * p->dilation_w);
              if (px == NULL) continue; /* border: zero point 0 adds nothing */
              const int8_t* w_tap = io.filter + ((size_t)ky * p->filter_w + kx) * p->out_ch + c0;
              for (int32_t l = 0; l < lanes; ++l) {
                const int32_t x = woofles_load_elem(px, (size_t)((c0 + l) / p->depth_multiplier), 1);
                acc[l] = woofles_mac16(acc[l], x, w_tap[l]);
              }
            }
          }
          woofles_store_tile16(acc, lanes, c0, io.bias, p->bias_bits, p->multiplier, p->shift, p->act_min,
                               p->act_max, out_px);
          ++tiles;
        }
      }
    }
  }
  woofles_kernel_end(dev, tiles * (window * WOOFLES_INT16_RATE + WOOFLES_TILE_OVERHEAD));
  return TVMD_OK;
}
