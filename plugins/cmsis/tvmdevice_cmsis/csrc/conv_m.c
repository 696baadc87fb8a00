/*
 * CONV_2D for the M-profile packing (-mcpu=cortex-m*): the operands as
 * CMSIS-NN's arm_convolve_s8 takes them.  The int8 OHWI filter is read in
 * place from the filter buffer (buffers[1]); scratch holds two im2col
 * columns of int16 (arm_convolve_s8_get_buffer_size: 2 * k values): the
 * receptive fields of two output pixels with the input offset added, zero
 * where a tap falls outside the image (the reference skips those taps, which
 * add nothing).  Output channels are then taken two at a time: four dot
 * products (two columns by two filter rows) share every load, as CMSIS-NN's
 * s8 x s16 matrix kernel does, and each sum is requantized as TFLM's
 * reference ConvPerChannel does.
 * Integer arithmetic only; the int32 sums cannot overflow (bounded at
 * prepare), so the summation order does not change a bit.
 */
#include "internal.h"

size_t tvmd_cmsis_conv_m_s8_get_buffer_size(const tvmd_cmsis_conv_m_params_t* p) {
  return 2u * (size_t)p->k * sizeof(int16_t);
}

/* The im2col column of output pixel (oy, ox) for the group whose input
 * channels start at ch0. */
static void fill_column(const tvmd_cmsis_conv_m_params_t* p, const int8_t* image, int32_t ch0, int32_t oy,
                        int32_t ox, int16_t* col) {
  const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
  const int16_t offset = (int16_t)p->q.input_offset;
  int16_t* dst = col;
  for (int32_t fy = 0; fy < p->filter_h; fy++) {
    const int32_t iy = iy0 + fy * p->dilation_h;
    for (int32_t fx = 0; fx < p->filter_w; fx++) {
      const int32_t ix = ix0 + fx * p->dilation_w;
      if (iy < 0 || iy >= p->in_h || ix < 0 || ix >= p->in_w) {
        for (int32_t c = 0; c < p->filter_in_ch; c++) dst[c] = 0;
      } else {
        const int8_t* src = image + ((size_t)iy * (size_t)p->in_w + (size_t)ix) * (size_t)p->in_ch + (size_t)ch0;
        for (int32_t c = 0; c < p->filter_in_ch; c++) dst[c] = (int16_t)(src[c] + offset);
      }
      dst += p->filter_in_ch;
    }
  }
}

/* s[2 * c + r] = column c . filter row r, for columns c0, c1 and rows w0, w1. */
static void dot_2x2(const int16_t* c0, const int16_t* c1, const int8_t* w0, const int8_t* w1, int32_t k,
                    int32_t s[4]) {
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
  for (int32_t i = 0; i < k; i++) {
    const int32_t a0 = c0[i], a1 = c1[i], b0 = w0[i], b1 = w1[i];
    s00 += a0 * b0;
    s01 += a0 * b1;
    s10 += a1 * b0;
    s11 += a1 * b1;
  }
  s[0] = s00;
  s[1] = s01;
  s[2] = s10;
  s[3] = s11;
}

int32_t tvmd_cmsis_conv_m_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_conv_m_params_t* p = (const tvmd_cmsis_conv_m_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_CONV_M) return TVMD_ERR_INVALID_ARGUMENT;
  tvmd_cmsis_weighted_io_t io;
  const int32_t status = tvmd_cmsis_weighted_enter(buffers, p->num_inputs, 1, resource_handle,
                                                   TVMD_CMSIS_KIND_CONV, p->macs, &io);
  if (status != TVMD_OK) return status;
  if (io.filter == NULL) return TVMD_ERR_INVALID_ARGUMENT;

  int16_t* cols = (int16_t*)io.scratch;
  const int32_t k = p->k, per_group = p->out_ch / p->groups, pixels = p->out_h * p->out_w;
  const int32_t qstep = p->per_channel ? 1 : 0;
  const size_t in_image = (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t* image = io.input + (size_t)b * in_image;
    int8_t* out_image = io.output + (size_t)b * (size_t)pixels * (size_t)p->out_ch;
    for (int32_t g = 0; g < p->groups; g++) {
      for (int32_t px = 0; px < pixels; px += 2) {
        const int32_t two = px + 1 < pixels;
        fill_column(p, image, g * p->filter_in_ch, px / p->out_w, px % p->out_w, cols);
        if (two) fill_column(p, image, g * p->filter_in_ch, (px + 1) / p->out_w, (px + 1) % p->out_w, cols + k);
        /* A lone last pixel pairs with itself; its copy is not stored. */
        const int16_t* col1 = two ? cols + k : cols;
        int8_t* out0 = out_image + (size_t)px * (size_t)p->out_ch;
        int8_t* out1 = out0 + p->out_ch;
        const int32_t end = (g + 1) * per_group;
        for (int32_t oc = g * per_group; oc < end; oc += 2) {
          /* A lone last channel pairs with itself too. */
          const int32_t oc1 = oc + 1 < end ? oc + 1 : oc;
          int32_t sums[4];
          dot_2x2(cols, col1, io.filter + (size_t)oc * (size_t)k, io.filter + (size_t)oc1 * (size_t)k, k, sums);
          const int32_t m0 = p->multiplier[oc * qstep], s0 = p->shift[oc * qstep];
          const int32_t m1 = p->multiplier[oc1 * qstep], s1 = p->shift[oc1 * qstep];
          out0[oc] = tvmd_cmsis_output_s8(sums[0], io.bias, oc, m0, s0, &p->q);
          out0[oc1] = tvmd_cmsis_output_s8(sums[1], io.bias, oc1, m1, s1, &p->q);
          if (two) {
            out1[oc] = tvmd_cmsis_output_s8(sums[2], io.bias, oc, m0, s0, &p->q);
            out1[oc1] = tvmd_cmsis_output_s8(sums[3], io.bias, oc1, m1, s1, &p->q);
          }
        }
      }
    }
  }
  return TVMD_OK;
}
