/*
 * TRANSPOSE_CONV, int8, as CMSIS-NN's arm_transpose_conv_s8 computes it:
 * per batch, every input pixel is multiplied by every filter tap and added
 * into an int32 scratch image of the output (the scatter of TFLM's
 * reference), then each accumulator gets its bias and is requantized per
 * channel.  The OHWI int8 filter is read in place.  Accumulation wraps in
 * uint32 like the reference's int32; the prepare step bounds it anyway.
 * Each tap's dot products over the input channels run two output channels
 * at a time: mprofile.h's tvmd_cmsis_dot_s8_1x2 (VMLADAVA on Helium, SMLAD
 * on the DSP extension, plain C elsewhere), modulo 2^32 on every path.
 */
#include "mprofile.h"

size_t tvmd_cmsis_transpose_conv_s8_get_buffer_size(const tvmd_cmsis_transpose_conv_params_t* p) {
  return (size_t)p->out_h * (size_t)p->out_w * (size_t)p->out_ch * sizeof(int32_t);
}

int32_t tvmd_cmsis_transpose_conv_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_transpose_conv_params_t* p = (const tvmd_cmsis_transpose_conv_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_TRANSPOSE_CONV || buffers == NULL ||
      (p->num_inputs != 3 && p->num_inputs != 4)) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  const int8_t* filter = (const int8_t*)buffers[1]; /* buffers[0]: the output shape */
  const int8_t* input = (const int8_t*)buffers[2];
  const int32_t* bias = p->num_inputs == 4 ? (const int32_t*)buffers[3] : NULL;
  int8_t* output = (int8_t*)buffers[p->num_inputs];
  uint32_t* acc = (uint32_t*)buffers[p->num_inputs + 1];
  if (filter == NULL || input == NULL || output == NULL || acc == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int32_t status = tvmd_cmsis_enter(resource_handle, TVMD_CMSIS_KIND_TRANSPOSE_CONV, p->macs);
  if (status != TVMD_OK) return status;

  const size_t in_ch = (size_t)p->in_ch, out_ch = (size_t)p->out_ch;
  const size_t image = (size_t)p->out_h * (size_t)p->out_w * out_ch;
  const size_t filter_row = (size_t)p->filter_h * (size_t)p->filter_w * in_ch;
  const int32_t in_offset = p->q.input_offset;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (size_t i = 0; i < image; ++i) acc[i] = 0;
    for (int32_t iy = 0; iy < p->in_h; ++iy) {
      for (int32_t ix = 0; ix < p->in_w; ++ix) {
        const int8_t* x = input + (((size_t)b * (size_t)p->in_h + (size_t)iy) * (size_t)p->in_w + (size_t)ix) * in_ch;
        for (int32_t ky = 0; ky < p->filter_h; ++ky) {
          const int32_t oy = iy * p->stride_h - p->pad_h + ky;
          if (oy < 0 || oy >= p->out_h) continue;
          for (int32_t kx = 0; kx < p->filter_w; ++kx) {
            const int32_t ox = ix * p->stride_w - p->pad_w + kx;
            if (ox < 0 || ox >= p->out_w) continue;
            uint32_t* a = acc + ((size_t)oy * (size_t)p->out_w + (size_t)ox) * out_ch;
            const int8_t* w = filter + ((size_t)ky * (size_t)p->filter_w + (size_t)kx) * in_ch;
            for (size_t oc = 0; oc < out_ch; oc += 2) {
              /* A lone last channel pairs with itself; its copy is not added. */
              const size_t oc1 = oc + 1 < out_ch ? oc + 1 : oc;
              int32_t s[2];
              tvmd_cmsis_dot_s8_1x2(x, w + oc * filter_row, w + oc1 * filter_row, (int32_t)in_ch, in_offset, s);
              a[oc] += (uint32_t)s[0];
              if (oc1 != oc) a[oc1] += (uint32_t)s[1];
            }
          }
        }
      }
    }
    int8_t* out = output + (size_t)b * image;
    for (size_t i = 0; i < image; ++i) {
      const int32_t oc = (int32_t)(i % out_ch);
      out[i] = tvmd_cmsis_output_s8((int32_t)acc[i], bias, oc, p->multiplier[oc], p->shift[oc], &p->q);
    }
  }
  return TVMD_OK;
}
