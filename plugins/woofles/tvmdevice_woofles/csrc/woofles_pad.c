/*
 * PAD and PADV2 on the woofles window loader, int8 and int16; bit-exact with
 * TFLM's reference Pad for borders on the height and width of an
 * [N, H, W, C] tensor (batch and channel padding is refused in Python).
 *
 * The loader is the convolutions' (woofles_window_pixel): for each output
 * pixel it fetches the input pixel, or, in the border, the pad value, and
 * writes the bordered tile back to SRAM.  It moves mac_width bytes per cycle.
 */
#include "woofles_kernels.h"
#include "woofles_tile.h"

static int32_t woofles_pad(const void* params, void* const* buffers, void* resource_handle, int wide) {
  const tvmd_woofles_pad_params_t* p = (const tvmd_woofles_pad_params_t*)params;
  tvm_device_woofles_t* dev = (tvm_device_woofles_t*)resource_handle;
  if (p == NULL || buffers == NULL || dev == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  int32_t status = woofles_kernel_begin(dev);
  if (status != TVMD_OK) return status;
  if ((p->num_inputs != 2 && p->num_inputs != 3) || p->itemsize != (wide ? 2 : 1) || p->batches <= 0 ||
      p->in_h <= 0 || p->in_w <= 0 || p->channels <= 0 || p->pad_top < 0 || p->pad_left < 0 ||
      p->out_h < p->in_h + p->pad_top || p->out_w < p->in_w + p->pad_left) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  const woofles_window_t win = {p->in_h, p->in_w, p->channels, p->itemsize};
  const size_t pixel = (size_t)p->channels * (size_t)p->itemsize;
  const uint8_t* input = woofles_buffer(dev, buffers, 0, (uint64_t)p->batches * p->in_h * p->in_w * pixel);
  uint8_t* output = woofles_buffer(dev, buffers, p->num_inputs, (uint64_t)p->batches * p->out_h * p->out_w * pixel);
  if (input == NULL || output == NULL) return TVMD_ERR_INVALID_ARGUMENT;

  size_t o = 0; /* output element index */
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const uint8_t* px = woofles_window_pixel(input, &win, b, oy - p->pad_top, ox - p->pad_left);
        if (px != NULL) {
          memcpy(output + o * (size_t)p->itemsize, px, pixel);
        } else {
          for (int32_t c = 0; c < p->channels; ++c) woofles_store_elem(output, o + (size_t)c, wide, p->pad_value);
        }
        o += (size_t)p->channels;
      }
    }
  }
  const uint64_t width = dev->mac_width;
  const uint64_t pixels = (uint64_t)p->batches * p->out_h * p->out_w;
  woofles_kernel_end(dev, pixels * ((pixel + width - 1) / width) + WOOFLES_TILE_OVERHEAD);
  return TVMD_OK;
}

int32_t tvmd_woofles_pad_s8(const void* params, void* const* buffers, void* resource_handle) {
  return woofles_pad(params, buffers, resource_handle, 0);
}

int32_t tvmd_woofles_pad_s16(const void* params, void* const* buffers, void* resource_handle) {
  return woofles_pad(params, buffers, resource_handle, 1);
}
