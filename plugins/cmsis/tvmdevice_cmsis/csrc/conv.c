/*
 * CONV_2D, int8 with per-channel (or per-tensor) weights: TFLM's
 * reference_integer_ops::ConvPerChannel, which CMSIS-NN's arm_convolve_s8
 * matches.
 *
 * Each batch image (but a pointwise convolution's, see pointwise()) is first
 * widened to int16 with the input offset added,
 * inside a zero border wide enough for every window: border taps then add
 * exactly what the reference's skipped taps add, nothing, and no tap needs a
 * bounds check.  A bordered image over TVMD_CMSIS_CONV_BAND_BYTES is built a
 * band of output rows at a time (the input rows that band's windows read;
 * band_rows()), so the scratch stays about that size whatever the image's.  Output pixels are processed TVMD_CMSIS_CONV_ROWS at a time:
 * their receptive fields are copied into im2col rows (a pointwise convolution
 * widens its input pixels straight into those rows: no image copy, no
 * im2col gathering, no image scratch), the GEMM (gemm.c) multiplies them with
 * the weights rearranged at compile time, and the int32 sums are requantized
 * per channel.
 */
#include <string.h>

#include "internal.h"

/* Rows and columns of the bordered image. */
static int32_t padded_h(const tvmd_cmsis_conv_params_t* p) {
  return tvmd_cmsis_max(p->pad_h + p->in_h, (p->out_h - 1) * p->stride_h + (p->filter_h - 1) * p->dilation_h + 1);
}

static int32_t padded_w(const tvmd_cmsis_conv_params_t* p) {
  return tvmd_cmsis_max(p->pad_w + p->in_w, (p->out_w - 1) * p->stride_w + (p->filter_w - 1) * p->dilation_w + 1);
}

static size_t align64(size_t n) { return (n + 63u) & ~(size_t)63u; }

#if TVMD_CMSIS_X86
/* A convolution whose GEMM rows may be read in place from the bordered image
 * (tvmd_cmsis_conv_image_s8_avx2): each filter row's taps are one contiguous
 * span (ungrouped, dilation_w 1) of whole pairs (an even span). */
static int in_place(const tvmd_cmsis_conv_params_t* p) {
  return tvmd_cmsis_simd_level() >= TVMD_CMSIS_LEVEL_AVX2 && p->groups == 1 && p->dilation_w == 1 &&
         ((p->filter_w * p->in_ch) & 1) == 0;
}
#endif

/* A 1x1, stride-1, unpadded, ungrouped convolution: the input pixels are the
 * GEMM's rows as they are; each block of rows is widened into the im2col
 * rows, and no widened image is kept. */
static int pointwise(const tvmd_cmsis_conv_params_t* p) {
  return p->filter_h == 1 && p->filter_w == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_h == 0 &&
         p->pad_w == 0 && p->groups == 1 && p->out_h == p->in_h && p->out_w == p->in_w;
}

/* Output rows per band: all of them when the whole bordered image fits
 * TVMD_CMSIS_CONV_BAND_BYTES, else as many as fit (at least one). */
static int32_t band_rows(const tvmd_cmsis_conv_params_t* p) {
  const size_t row_bytes = (size_t)padded_w(p) * (size_t)p->in_ch * sizeof(int16_t);
  if ((size_t)padded_h(p) * row_bytes <= TVMD_CMSIS_CONV_BAND_BYTES) return p->out_h;
  const size_t window = (size_t)tvmd_cmsis_conv_band_in_rows(p, 1), fit = TVMD_CMSIS_CONV_BAND_BYTES / row_bytes;
  if (fit <= window) return 1;
  return tvmd_cmsis_min(p->out_h, (int32_t)((fit - window) / (size_t)p->stride_h) + 1);
}

static size_t image_bytes(const tvmd_cmsis_conv_params_t* p) {
  if (pointwise(p)) return 0;
  return align64((size_t)tvmd_cmsis_conv_band_in_rows(p, band_rows(p)) * (size_t)padded_w(p) * (size_t)p->in_ch *
                 sizeof(int16_t));
}

static size_t im2col_bytes(const tvmd_cmsis_conv_params_t* p) {
  return align64((size_t)TVMD_CMSIS_CONV_ROWS * 2 * (size_t)p->k_pairs * sizeof(int16_t));
}

size_t tvmd_cmsis_conv_s8_get_buffer_size(const tvmd_cmsis_conv_params_t* p) {
  return image_bytes(p) + im2col_bytes(p) + (size_t)TVMD_CMSIS_CONV_ROWS * (size_t)p->ldw * sizeof(int32_t);
}

/* Rows [r0, r0 + n) of the bordered image (widened, offset added, zero
 * border) into dst. */
TVMD_CMSIS_INLINE void widen_band(const tvmd_cmsis_conv_params_t* p, const int8_t* restrict image, int32_t r0,
                                  int32_t n, int16_t* restrict dst) {
  const size_t pw = (size_t)padded_w(p), ch = (size_t)p->in_ch;
  const size_t row_len = (size_t)p->in_w * ch;
  const int16_t offset = (int16_t)p->q.input_offset;
  memset(dst, 0, (size_t)n * pw * ch * sizeof(int16_t));
  const int32_t y_end = tvmd_cmsis_min(r0 + n, p->pad_h + p->in_h);
  for (int32_t y = tvmd_cmsis_max(r0, p->pad_h); y < y_end; y++) {
    const int8_t* restrict src = image + (size_t)(y - p->pad_h) * row_len;
    int16_t* restrict out = dst + ((size_t)(y - r0) * pw + (size_t)p->pad_w) * ch;
    for (size_t i = 0; i < row_len; i++) out[i] = (int16_t)(src[i] + offset);
  }
}

/* rows pixels of in_ch int8 values as GEMM rows of lda int16 with the input
 * offset added (the pair padding zeroed). */
TVMD_CMSIS_INLINE void widen_rows(const tvmd_cmsis_conv_params_t* p, const int8_t* restrict src, int32_t rows,
                                  int32_t lda, int16_t* restrict dst) {
  const int16_t offset = (int16_t)p->q.input_offset;
  for (int32_t r = 0; r < rows; r++) {
    const int8_t* restrict x = src + (size_t)r * (size_t)p->in_ch;
    int16_t* restrict row = dst + (size_t)r * (size_t)lda;
    for (int32_t c = 0; c < p->in_ch; c++) row[c] = (int16_t)(x[c] + offset);
    if (p->in_ch & 1) row[p->in_ch] = 0;
  }
}

/* One im2col row from the bordered image: output pixel (oy, ox), channel
 * group starting at ch0. */
TVMD_CMSIS_INLINE void im2col_row(const tvmd_cmsis_conv_params_t* p, const int16_t* restrict image, int32_t ch0,
                                  int32_t oy, int32_t ox, int16_t* restrict row) {
  const size_t pw = (size_t)padded_w(p), ch = (size_t)p->in_ch, depth = (size_t)p->filter_in_ch;
  const size_t y0 = (size_t)(oy * p->stride_h), x0 = (size_t)(ox * p->stride_w);
  int16_t* restrict dst = row;
  for (size_t fy = 0; fy < (size_t)p->filter_h; fy++) {
    const int16_t* restrict line = image + ((y0 + fy * (size_t)p->dilation_h) * pw + x0) * ch + (size_t)ch0;
    if (p->dilation_w == 1 && depth == ch) {
      /* The filter row's taps are contiguous: one span. */
      const size_t n = (size_t)p->filter_w * ch;
      for (size_t i = 0; i < n; i++) dst[i] = line[i];
      dst += n;
    } else {
      for (size_t fx = 0; fx < (size_t)p->filter_w; fx++) {
        const int16_t* restrict tap = line + fx * (size_t)p->dilation_w * ch;
        for (size_t c = 0; c < depth; c++) dst[c] = tap[c];
        dst += depth;
      }
    }
  }
  if (p->k & 1) row[p->k] = 0; /* the pair padding */
}

TVMD_CMSIS_SIMD
int32_t tvmd_cmsis_conv_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_conv_params_t* p = (const tvmd_cmsis_conv_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_CONV) return TVMD_ERR_INVALID_ARGUMENT;
  tvmd_cmsis_weighted_io_t io;
  const int32_t status = tvmd_cmsis_weighted_enter(buffers, p->num_inputs, 1, resource_handle,
                                                   TVMD_CMSIS_KIND_CONV, p->macs, &io);
  if (status != TVMD_OK) return status;
  const int8_t* input = io.input;
  const int32_t* bias = io.bias;
  int8_t* output = io.output;
  void* scratch = io.scratch;

  int16_t* image = (int16_t*)scratch;
  int16_t* cols = (int16_t*)((uint8_t*)scratch + image_bytes(p));
  int32_t* acc = (int32_t*)((uint8_t*)scratch + image_bytes(p) + im2col_bytes(p));
  const int direct = pointwise(p);
  const int32_t lda = 2 * p->k_pairs;
  const int32_t per_group = p->out_ch / p->groups;
  const int32_t pixels = p->out_h * p->out_w;
  const size_t image_size = (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
  const int32_t band = direct ? p->out_h : band_rows(p);
  if (p->weights_vnni != NULL && tvmd_cmsis_vnni_level()) { /* the int8 VNNI GEMM (gemm_vnni.c) */
    tvmd_cmsis_conv_vnni(p, input, bias, output, image, cols, direct ? 0 : band, direct ? 0 : padded_w(p));
    return TVMD_OK;
  }
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t* in_image = input + (size_t)b * image_size;
    int8_t* out_image = output + (size_t)b * (size_t)pixels * (size_t)p->out_ch;
    for (int32_t oy0 = 0; oy0 < p->out_h; oy0 += band) {
      /* Output rows [oy0, oy0 + band_h); the image holds the rows they read. */
      const int32_t band_h = tvmd_cmsis_min(band, p->out_h - oy0);
      if (!direct) widen_band(p, in_image, oy0 * p->stride_h, tvmd_cmsis_conv_band_in_rows(p, band_h), image);
      const int32_t px_begin = oy0 * p->out_w, px_end = (oy0 + band_h) * p->out_w;
#if TVMD_CMSIS_X86
      if (!direct && in_place(p)) {
        tvmd_cmsis_conv_image_s8_avx2(p, image, padded_w(p), band_h, bias,
                                      out_image + (size_t)px_begin * (size_t)p->out_ch);
        continue;
      }
#endif
      for (int32_t g = 0; g < p->groups; g++) {
        const int32_t oc0 = g * per_group;
        const int16_t* weights = p->weights + (size_t)g * 2 * (size_t)p->k_pairs * (size_t)p->ldw;
        for (int32_t px0 = px_begin; px0 < px_end; px0 += TVMD_CMSIS_CONV_ROWS) {
          const int32_t rows = tvmd_cmsis_min(TVMD_CMSIS_CONV_ROWS, px_end - px0);
          if (direct) {
            widen_rows(p, in_image + (size_t)px0 * (size_t)p->in_ch, rows, lda, cols);
          } else {
            for (int32_t r = 0; r < rows; r++) {
              const int32_t px = px0 + r;
              im2col_row(p, image, g * p->filter_in_ch, px / p->out_w - oy0, px % p->out_w,
                         cols + (size_t)r * (size_t)lda);
            }
          }
          tvmd_cmsis_gemm_s8(cols, lda, rows, p->k_pairs, weights, p->ldw, per_group, bias ? bias + oc0 : NULL,
                             p->multiplier + oc0, p->shift + oc0, &p->q,
                             out_image + (size_t)px0 * (size_t)p->out_ch + oc0, p->out_ch, acc);
        }
      }
    }
  }
  return TVMD_OK;
}
