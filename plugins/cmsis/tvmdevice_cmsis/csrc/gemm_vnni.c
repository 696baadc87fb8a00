/*
 * CONV_2D on the int8 VNNI GEMM (simd_x86_vnni.c; FULLY_CONNECTED's use of
 * it is fully_connected_vnni.c), when the kernels use a VNNI level and
 * prepare packed its operands (weights_vnni, vnni_correction): the operands
 * of each block of rows as the GEMM takes them, u = x + 128 bytes (x ^ 0x80).
 *
 * A convolution's image is copied once per batch image (per band of output
 * rows when conv.c bands it) into a border of the input zero point, as u
 * bytes: a border tap reads u = zp + 128, and the GEMM computes
 * (zp + 128 - 128 + input_offset) * w = (zp - zp) * w = 0 for it, exactly
 * what the reference's skipped tap adds.
 *
 * Ungrouped without width dilation (vnni_segment_quads > 0), each output
 * pixel's filter rows are spans of that image: the GEMM reads them in place,
 * no im2col copy, each filter row's taps padded to whole quads with zero
 * weights, so the up to 3 bytes read past a span (the next pixel's, or the
 * scratch past the band, which the int16 image's size leaves room for) add
 * 0.  A pointwise convolution whose pixels are whole quads (in_ch % 4 == 0)
 * reads the int8 input itself, flipped to u as broadcast.  Otherwise rows
 * are copied (im2col, or the pointwise pixels as u) and the reduction steps
 * past k (to a multiple of 4) zeroed: their weights are 0, so they add 0.
 * The bytes fit in the scratch the int16 path plans (half its element size),
 * at the same places: the scratch size does not change.
 */
#include <string.h>

#include "internal.h"

void tvmd_cmsis_gemm_vnni_s8(const tvmd_cmsis_vnni_rows_t* a, int32_t m, const int8_t* w, int32_t ldw, int32_t n,
                             const int32_t* corr, const int32_t* bias, const int32_t* multiplier,
                             const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo) {
#if TVMD_CMSIS_X86
  if (tvmd_cmsis_vnni_level() == TVMD_CMSIS_LEVEL_AVX512VNNI) {
    tvmd_cmsis_gemm_vnni_avx512(a, m, w, ldw, n, corr, bias, multiplier, shift, q, out, ldo);
  } else {
    tvmd_cmsis_gemm_vnni_avx2(a, m, w, ldw, n, corr, bias, multiplier, shift, q, out, ldo);
  }
#else
  (void)a, (void)m, (void)w, (void)ldw, (void)n, (void)corr, (void)bias, (void)multiplier, (void)shift, (void)q;
  (void)out, (void)ldo;
#endif
}

/* Rows of lda bytes, one segment of all their quads. */
static tvmd_cmsis_vnni_rows_t packed_rows(const uint8_t* rows, int32_t lda) {
  const tvmd_cmsis_vnni_rows_t a = {rows, (size_t)lda, 0, 1, lda / 4, 0};
  return a;
}

/* n int8 values as u bytes. */
static void to_u8(const int8_t* restrict x, size_t n, uint8_t* restrict u) {
  for (size_t i = 0; i < n; i++) u[i] = (uint8_t)((uint8_t)x[i] ^ 0x80u);
}

/* Rows [r0, r0 + n) of the batch image as u bytes inside a border of zero
 * points (pw pixels wide). */
static void bordered_band(const tvmd_cmsis_conv_params_t* p, const int8_t* image, int32_t r0, int32_t n,
                          int32_t pw, uint8_t* dst) {
  const size_t ch = (size_t)p->in_ch, row_len = (size_t)p->in_w * ch;
  const uint8_t zero_point = (uint8_t)((uint8_t)(int8_t)(-p->q.input_offset) ^ 0x80u);
  memset(dst, zero_point, (size_t)n * (size_t)pw * ch);
  const int32_t y_end = tvmd_cmsis_min(r0 + n, p->pad_h + p->in_h);
  for (int32_t y = tvmd_cmsis_max(r0, p->pad_h); y < y_end; y++) {
    to_u8(image + (size_t)(y - p->pad_h) * row_len, row_len,
          dst + ((size_t)(y - r0) * (size_t)pw + (size_t)p->pad_w) * ch);
  }
}

/* One im2col row of u bytes (output pixel oy, ox; channel group from ch0),
 * zeroed from k to lda. */
static void im2col_row(const tvmd_cmsis_conv_params_t* p, const uint8_t* image, int32_t pw, int32_t ch0,
                       int32_t oy, int32_t ox, int32_t lda, uint8_t* row) {
  const size_t ch = (size_t)p->in_ch, depth = (size_t)p->filter_in_ch;
  const size_t y0 = (size_t)(oy * p->stride_h), x0 = (size_t)(ox * p->stride_w);
  uint8_t* dst = row;
  for (size_t fy = 0; fy < (size_t)p->filter_h; fy++) {
    const uint8_t* line = image + ((y0 + fy * (size_t)p->dilation_h) * (size_t)pw + x0) * ch + (size_t)ch0;
    if (p->dilation_w == 1 && depth == ch) {
      const size_t n = (size_t)p->filter_w * ch; /* the filter row's taps are contiguous */
      memcpy(dst, line, n);
      dst += n;
    } else {
      for (size_t fx = 0; fx < (size_t)p->filter_w; fx++) {
        memcpy(dst, line + fx * (size_t)p->dilation_w * ch, depth);
        dst += depth;
      }
    }
  }
  memset(row + p->k, 0, (size_t)(lda - p->k));
}

/* Output rows [oy0, oy0 + band_h) of a convolution whose weights are packed
 * a segment per filter row (vnni_segment_quads): each output row's pixels
 * are GEMM rows read in place from the bordered band, stride_w pixels
 * apart, and its filter rows dilation_h image rows apart. */
static void band_in_place(const tvmd_cmsis_conv_params_t* p, const uint8_t* image, int32_t pw, int32_t band_h,
                          const int32_t* bias, int8_t* out_rows) {
  const size_t ch = (size_t)p->in_ch;
  tvmd_cmsis_vnni_rows_t a = {NULL, (size_t)p->stride_w * ch, (size_t)p->dilation_h * (size_t)pw * ch,
                              p->filter_h, p->vnni_segment_quads, 0};
  for (int32_t oy = 0; oy < band_h; oy++) {
    a.base = image + (size_t)(oy * p->stride_h) * (size_t)pw * ch;
    tvmd_cmsis_gemm_vnni_s8(&a, p->out_w, p->weights_vnni, p->ldw, p->out_ch, p->vnni_correction, bias,
                            p->multiplier, p->shift, &p->q, out_rows + (size_t)oy * (size_t)p->out_w * (size_t)p->out_ch,
                            p->out_ch);
  }
}

void tvmd_cmsis_conv_vnni(const tvmd_cmsis_conv_params_t* p, const int8_t* input, const int32_t* bias,
                          int8_t* output, void* image_scratch, void* rows_scratch, int32_t band, int32_t pw) {
  uint8_t* image = (uint8_t*)image_scratch;
  uint8_t* rows = (uint8_t*)rows_scratch;
  const int direct = band == 0; /* pointwise: input pixels are the rows */
  const int32_t k4 = p->vnni_segment_quads > 0 ? p->filter_h * p->vnni_segment_quads : (p->k + 3) / 4;
  const int32_t lda = 4 * k4;
  const int32_t per_group = p->out_ch / p->groups;
  const int32_t pixels = p->out_h * p->out_w;
  const size_t image_size = (size_t)p->in_h * (size_t)p->in_w * (size_t)p->in_ch;
  const int32_t step = direct ? p->out_h : band;
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t* in_image = input + (size_t)b * image_size;
    int8_t* out_image = output + (size_t)b * (size_t)pixels * (size_t)p->out_ch;
    if (direct && (p->in_ch & 3) == 0) {
      /* The int8 pixels are whole-quad rows as they are: read in place,
       * flipped to u as broadcast. */
      const tvmd_cmsis_vnni_rows_t a = {(const uint8_t*)in_image, (size_t)p->in_ch, 0, 1, k4, 1};
      tvmd_cmsis_gemm_vnni_s8(&a, pixels, p->weights_vnni, p->ldw, p->out_ch, p->vnni_correction, bias,
                              p->multiplier, p->shift, &p->q, out_image, p->out_ch);
      continue;
    }
    for (int32_t oy0 = 0; oy0 < p->out_h; oy0 += step) {
      /* Output rows [oy0, oy0 + band_h); the image holds the rows they read. */
      const int32_t band_h = tvmd_cmsis_min(step, p->out_h - oy0);
      if (!direct) bordered_band(p, in_image, oy0 * p->stride_h, tvmd_cmsis_conv_band_in_rows(p, band_h), pw, image);
      const int32_t px_end = (oy0 + band_h) * p->out_w;
      if (!direct && p->vnni_segment_quads > 0) {
        band_in_place(p, image, pw, band_h, bias, out_image + (size_t)oy0 * (size_t)p->out_w * (size_t)p->out_ch);
        continue;
      }
      for (int32_t g = 0; g < p->groups; g++) {
        const int32_t oc0 = g * per_group;
        const int8_t* weights = p->weights_vnni + (size_t)g * (size_t)lda * (size_t)p->ldw;
        const int32_t* corr = p->vnni_correction + (size_t)g * (size_t)p->ldw;
        for (int32_t px0 = oy0 * p->out_w; px0 < px_end; px0 += TVMD_CMSIS_CONV_ROWS) {
          const int32_t m = tvmd_cmsis_min(TVMD_CMSIS_CONV_ROWS, px_end - px0);
          for (int32_t r = 0; r < m; r++) {
            uint8_t* row = rows + (size_t)r * (size_t)lda;
            const int32_t px = px0 + r;
            if (direct) {
              to_u8(in_image + (size_t)px * (size_t)p->in_ch, (size_t)p->in_ch, row);
              memset(row + p->in_ch, 0, (size_t)(lda - p->in_ch));
            } else {
              im2col_row(p, image, pw, g * p->filter_in_ch, px / p->out_w - oy0, px % p->out_w, lda, row);
            }
          }
          const tvmd_cmsis_vnni_rows_t a = packed_rows(rows, lda);
          tvmd_cmsis_gemm_vnni_s8(&a, m, weights, p->ldw, per_group, corr, bias ? bias + oc0 : NULL,
                                  p->multiplier + oc0, p->shift + oc0, &p->q,
                                  out_image + (size_t)px0 * (size_t)p->out_ch + oc0, p->out_ch);
        }
      }
    }
  }
}
