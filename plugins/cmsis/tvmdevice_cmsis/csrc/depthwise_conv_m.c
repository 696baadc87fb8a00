/*
 * DEPTHWISE_CONV_2D for the M-profile packing (-mcpu=cortex-m*): the
 * operands as CMSIS-NN's arm_depthwise_conv_s8 takes them, no scratch
 * (arm_depthwise_conv_s8 needs none).  The int8 filter [1, KH, KW, out_ch]
 * is read in place from the filter buffer (buffers[1]); output channel
 * c * depth_multiplier + m sums the taps inside the image of input channel
 * c, as TFLM's reference DepthwiseConvPerChannel does (the range of taps
 * inside the image is found once per output row and pixel, not per tap).
 * Helium (MVE) path, for depth multiplier 1 and for one input channel (any
 * depth multiplier: every output channel then sees the same input value):
 * sixteen output channels at a time, four int32 lanes per vector, a
 * VMUL and a VADD per four products and tap, requantized four lanes at a time; other
 * shapes and CPUs take the plain C loop.  Every path is exact in int32, so
 * they agree bit for bit.
 * Integer arithmetic only; the int32 sums cannot overflow (bounded at
 * prepare).
 */
#include "mprofile.h"

/* The taps [*lo, *hi) of a filter axis whose input coordinate
 * start + t * dilation lies in [0, size). */
static void tap_range(int32_t start, int32_t dilation, int32_t taps, int32_t size, int32_t* lo, int32_t* hi) {
  int32_t a = 0, b = taps;
  if (start < 0) a = (-start + dilation - 1) / dilation;
  if (start + (b - 1) * dilation >= size) b = size - start <= 0 ? 0 : (size - start + dilation - 1) / dilation;
  *lo = a;
  *hi = b > a ? b : a;
}

#if TVMD_CMSIS_MVE
/* Lanes of vector j (0..3) of a block with n live channels: 0..4. */
static inline mve_pred16_t lanes(int32_t n, int32_t j) {
  const int32_t live = n - 4 * j;
  return vctp32q((uint32_t)(live < 0 ? 0 : live));
}

/* Output pixel (oy, ox), output channels [oc0, oc0 + n) (n <= 16): the taps
 * inside the image summed on four vectors of four int32 lanes (lanes past n
 * load zero weights and add nothing), then requantized and stored. */
static void depthwise_block_mve(const tvmd_cmsis_depthwise_conv_m_params_t* p, const tvmd_cmsis_weighted_io_t* io,
                                const int8_t* image, int32_t iy0, int32_t ix0, int32_t fy0, int32_t fy1, int32_t fx0,
                                int32_t fx1, int32_t oc0, int32_t n, int8_t* out) {
  const mve_pred16_t m0 = lanes(n, 0), m1 = lanes(n, 1), m2 = lanes(n, 2), m3 = lanes(n, 3);
  const int32_t offset = p->q.input_offset;
  const int broadcast = p->in_ch == 1; /* one input channel: every output channel reads channel 0 */
  int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
  for (int32_t fy = fy0; fy < fy1; fy++) {
    const int32_t iy = iy0 + fy * p->dilation_h;
    const int8_t* row = image + (size_t)iy * (size_t)p->in_w * (size_t)p->in_ch;
    const int8_t* taps = io->filter + (size_t)(fy * p->filter_w) * (size_t)p->out_ch + (size_t)oc0;
    for (int32_t fx = fx0; fx < fx1; fx++) {
      const int32_t ix = ix0 + fx * p->dilation_w;
      const int8_t* w = taps + (size_t)fx * (size_t)p->out_ch;
      if (broadcast) {
        const int32_t x = (int32_t)row[ix] + offset;
        a0 = vmlaq_n_s32(a0, vldrbq_z_s32(w, m0), x);
        a1 = vmlaq_n_s32(a1, vldrbq_z_s32(w + 4, m1), x);
        a2 = vmlaq_n_s32(a2, vldrbq_z_s32(w + 8, m2), x);
        a3 = vmlaq_n_s32(a3, vldrbq_z_s32(w + 12, m3), x);
      } else {
        const int8_t* x = row + (size_t)ix * (size_t)p->in_ch + (size_t)oc0;
        a0 = vaddq_s32(a0, vmulq_s32(vaddq_n_s32(vldrbq_z_s32(x, m0), offset), vldrbq_z_s32(w, m0)));
        a1 = vaddq_s32(a1, vmulq_s32(vaddq_n_s32(vldrbq_z_s32(x + 4, m1), offset), vldrbq_z_s32(w + 4, m1)));
        a2 = vaddq_s32(a2, vmulq_s32(vaddq_n_s32(vldrbq_z_s32(x + 8, m2), offset), vldrbq_z_s32(w + 8, m2)));
        a3 = vaddq_s32(a3, vmulq_s32(vaddq_n_s32(vldrbq_z_s32(x + 12, m3), offset), vldrbq_z_s32(w + 12, m3)));
      }
    }
  }
  const int32x4_t acc[4] = {a0, a1, a2, a3};
  const mve_pred16_t live[4] = {m0, m1, m2, m3};
  for (int32_t j = 0; j < 4 && 4 * j < n; j++) {
    const int32_t oc = oc0 + 4 * j;
    int32x4_t v = acc[j];
    if (io->bias != NULL) v = vaddq_s32(v, vldrwq_z_s32(io->bias + oc, live[j])); /* wraps, as the reference */
    const int32x4_t multiplier = p->per_channel ? vldrwq_z_s32(p->multiplier + oc, live[j])
                                                : vdupq_n_s32(p->multiplier[0]);
    const int32x4_t shift = p->per_channel ? vldrbq_z_s32(p->shift + oc, live[j]) : vdupq_n_s32(p->shift[0]);
    v = tvmd_cmsis_clamp_mve(tvmd_cmsis_requantize_mve(v, multiplier, shift), &p->q);
    vstrbq_p_s32(out + oc, v, live[j]);
  }
}

static void depthwise_mve(const tvmd_cmsis_depthwise_conv_m_params_t* p, const tvmd_cmsis_weighted_io_t* io) {
  const size_t in_image = (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
  int8_t* out = io->output;
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t* image = io->input + (size_t)b * in_image;
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h;
      int32_t fy0, fy1;
      tap_range(iy0, p->dilation_h, p->filter_h, p->in_h, &fy0, &fy1);
      for (int32_t ox = 0; ox < p->out_w; ox++) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        int32_t fx0, fx1;
        tap_range(ix0, p->dilation_w, p->filter_w, p->in_w, &fx0, &fx1);
        for (int32_t oc = 0; oc < p->out_ch; oc += 16) {
          const int32_t n = p->out_ch - oc < 16 ? p->out_ch - oc : 16;
          depthwise_block_mve(p, io, image, iy0, ix0, fy0, fy1, fx0, fx1, oc, n, out);
        }
        out += p->out_ch;
      }
    }
  }
}
#endif

size_t tvmd_cmsis_depthwise_conv_m_s8_get_buffer_size(const tvmd_cmsis_depthwise_conv_m_params_t* p) {
  (void)p;
  return 0;
}

int32_t tvmd_cmsis_depthwise_conv_m_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_depthwise_conv_m_params_t* p = (const tvmd_cmsis_depthwise_conv_m_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_DEPTHWISE_CONV_M) return TVMD_ERR_INVALID_ARGUMENT;
  tvmd_cmsis_weighted_io_t io;
  const int32_t status = tvmd_cmsis_weighted_enter(buffers, p->num_inputs, 0, resource_handle,
                                                   TVMD_CMSIS_KIND_DEPTHWISE_CONV, p->macs, &io);
  if (status != TVMD_OK) return status;
  if (io.filter == NULL) return TVMD_ERR_INVALID_ARGUMENT;

#if TVMD_CMSIS_MVE
  if (p->depth_multiplier == 1 || p->in_ch == 1) {
    depthwise_mve(p, &io);
    return TVMD_OK;
  }
#endif
  const int32_t dm = p->depth_multiplier, qstep = p->per_channel ? 1 : 0;
  const size_t in_image = (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
  int8_t* out = io.output;
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t* image = io.input + (size_t)b * in_image;
    for (int32_t oy = 0; oy < p->out_h; oy++) {
      const int32_t iy0 = oy * p->stride_h - p->pad_h;
      int32_t fy0, fy1;
      tap_range(iy0, p->dilation_h, p->filter_h, p->in_h, &fy0, &fy1);
      for (int32_t ox = 0; ox < p->out_w; ox++) {
        const int32_t ix0 = ox * p->stride_w - p->pad_w;
        int32_t fx0, fx1;
        tap_range(ix0, p->dilation_w, p->filter_w, p->in_w, &fx0, &fx1);
        for (int32_t ic = 0; ic < p->in_ch; ic++) {
          for (int32_t m = 0; m < dm; m++) {
            const int32_t oc = ic * dm + m;
            int32_t acc = 0;
            for (int32_t fy = fy0; fy < fy1; fy++) {
              const int32_t iy = iy0 + fy * p->dilation_h;
              const int8_t* row = image + (size_t)iy * (size_t)p->in_w * (size_t)p->in_ch + (size_t)ic;
              const int8_t* taps = io.filter + (size_t)(fy * p->filter_w) * (size_t)p->out_ch + (size_t)oc;
              for (int32_t fx = fx0; fx < fx1; fx++) {
                const int32_t ix = ix0 + fx * p->dilation_w;
                acc += ((int32_t)row[(size_t)ix * (size_t)p->in_ch] + p->q.input_offset) *
                       (int32_t)taps[(size_t)fx * (size_t)p->out_ch];
              }
            }
            *out++ = tvmd_cmsis_output_s8(acc, io.bias, oc, p->multiplier[oc * qstep], p->shift[oc * qstep], &p->q);
          }
        }
      }
    }
  }
  return TVMD_OK;
}
