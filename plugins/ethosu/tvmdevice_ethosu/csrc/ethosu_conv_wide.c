/*
 * The arithmetic of a convolution on a 16-bit IFM (ethosu_conv_wide.h).
 *
 * acc = bias + sum((ifm - ifm_zero_point) * weight) in the NPU's 40-bit
 * accumulator (ACC_FORMAT INT_40BIT, what Vela sets for a 16-bit IFM), computed
 * here in 64 bits: a channel whose bias and weights could take it beyond 40 bits
 * for some IFM is refused, since the register interface does not define what
 * the accumulator does then. The rescale is TOSA's RESCALE with the record's
 * scale and shift in the OFM's round mode (Vela emits NATURAL with the 16-bit
 * scale of its reduced_quantise_scale for int16 IFMs with 64-bit biases).
 */
#include "ethosu_conv_wide.h"

void ethosu_scale_record(const uint8_t* rec, int64_t* bias, int64_t* scale, int32_t* shift) {
  int64_t b = (int64_t)((uint64_t)rec[0] | (uint64_t)rec[1] << 8 | (uint64_t)rec[2] << 16 | (uint64_t)rec[3] << 24 |
                        (uint64_t)rec[4] << 32);
  if (b & ((int64_t)1 << 39)) b -= (int64_t)1 << 40;
  *bias = b;
  *scale = (int64_t)((uint32_t)rec[5] | (uint32_t)rec[6] << 8 | (uint32_t)rec[7] << 16 | (uint32_t)rec[8] << 24);
  *shift = rec[9] & 0x3F;
}

int conv_wide_check(ethosu_npu_t* npu, uint32_t ifm_prec, uint32_t ofm_prec) {
  const uint32_t round_mode = ofm_prec >> 14 & 3u;
  if ((ifm_prec & 1u) != 1u) return ethosu_refuse(npu, "IFM_PRECISION (not signed 8- or 16-bit)");
  if ((ofm_prec & 1u) != 1u || (ofm_prec >> 1 & 3u) > 1u) {
    return ethosu_refuse(npu, "OFM_PRECISION (not signed 8- or 16-bit after a 16-bit IFM)");
  }
  if (round_mode != ETHOSU_ROUND_TFL && round_mode != ETHOSU_ROUND_NATURAL) {
    return ethosu_refuse(npu, "OFM_PRECISION round_mode (not TFL or NATURAL)");
  }
  if (REG(npu, R_ACC_FORMAT) != 1u) return ethosu_refuse(npu, "ACC_FORMAT (not 40-bit integer for a 16-bit IFM)");
  return 0;
}

int conv_wide_window_check(ethosu_npu_t* npu, const fmap_t* in, uint64_t window) {
  if (window * 255u * fm_magnitude(in) >= (uint64_t)1 << 38) {
    return ethosu_refuse(npu, "ACC_FORMAT (a window this deep can overflow the 40-bit accumulator)");
  }
  return 0;
}

/* ethosu_apply_scale of a 40-bit accumulator by a 32-bit scale, whose product (up to 2^72) exceeds
 * 64 bits: with the scale's 16-bit halves, (a·2^16 + b + round) >> shift equals
 * (a + ((b + round) >> 16)) >> (shift - 16) for shift >= 16 (floor division by powers of two). */
static int64_t rescale_wide(int64_t acc, int64_t scale, int32_t shift, uint32_t round_mode) {
  int64_t round;
  if (shift < 16 || ethosu_rescale_fits((uint64_t)(acc < 0 ? -acc : acc), (uint64_t)scale, shift)) {
    return ethosu_apply_scale(acc, scale, shift, round_mode);
  }
  round = (int64_t)1 << (shift - 1);
  if (round_mode == ETHOSU_ROUND_TFL && shift > 31) round += acc >= 0 ? ((int64_t)1 << 30) : -((int64_t)1 << 30);
  return (acc * (scale >> 16) + ((acc * (scale & 0xFFFF) + round) >> 16)) >> (shift - 16);
}

/* The accumulator of one output element: the window's (ifm - zero point) * weight, padding
 * reading the zero point (contributing nothing). */
static int64_t window_sum(const fmap_t* in, const conv_window_t* win, const int16_t* w, int32_t oy, int32_t ox,
                          int32_t oc) {
  int64_t acc = 0;
  int32_t ky, kx, ic;
  const int32_t depth = win->depthwise ? 1 : in->c;
  for (ky = 0; ky < win->kh; ky++) {
    const int32_t iy = oy * win->stride_y - win->pad_top + ky * win->dil_y;
    if (iy < 0 || iy >= in->h) continue;
    for (kx = 0; kx < win->kw; kx++) {
      const int32_t ix = ox * win->stride_x - win->pad_left + kx * win->dil_x;
      const int16_t* wk = w + (ky * win->kw + kx) * depth;
      if (ix < 0 || ix >= in->w) continue;
      if (win->depthwise) {
        acc += (fm_read(in, iy, ix, oc) - in->zero_point) * wk[0];
      } else {
        for (ic = 0; ic < depth; ic++) acc += (fm_read(in, iy, ix, ic) - in->zero_point) * wk[ic];
      }
    }
  }
  return acc;
}

int conv_wide_block(ethosu_npu_t* npu, const fmap_t* in, const fmap_t* out, const conv_window_t* win,
                    const int16_t* weights, const uint8_t* records, int32_t ob, int32_t ob_end, int32_t act_min,
                    int32_t act_max) {
  const int32_t per_oc = win->kh * win->kw * (win->depthwise ? 1 : in->c);
  const uint32_t round_mode = REG(npu, R_OFM_PRECISION) >> 14 & 3u;
  const uint64_t magnitude = fm_magnitude(in);
  int64_t lo = fm_min(out), hi = fm_max(out);
  int32_t oc, oy, ox, j;
  if (act_min > lo) lo = act_min;
  if (act_max < hi) hi = act_max;
  /* every channel's bound first: nothing of the block is written when one is refused */
  for (oc = ob; oc < ob_end; oc++) {
    const int16_t* w = weights + (int64_t)(oc - ob) * per_oc;
    uint64_t weight_sum = 0, bound;
    int64_t bias, scale;
    int32_t shift;
    ethosu_scale_record(records + 10u * (uint64_t)oc, &bias, &scale, &shift);
    for (j = 0; j < per_oc; j++) weight_sum += (uint64_t)(w[j] < 0 ? -w[j] : w[j]);
    bound = (uint64_t)(bias < 0 ? -bias : bias) + weight_sum * magnitude;
    if (bound >= (uint64_t)1 << 39) {
      return ethosu_refuse(npu, "ACC_FORMAT (this channel's bias and weights can overflow the 40-bit accumulator)");
    }
    if (shift < 16 && !ethosu_rescale_fits(bound, (uint64_t)scale, shift)) {
      return ethosu_refuse(npu, "OFM scale (a shift below 16 with a product beyond 64 bits)");
    }
  }
  for (oc = ob; oc < ob_end; oc++) {
    const int16_t* w = weights + (int64_t)(oc - ob) * per_oc;
    int64_t bias, scale;
    int32_t shift;
    ethosu_scale_record(records + 10u * (uint64_t)oc, &bias, &scale, &shift);
    for (oy = 0; oy < out->h; oy++) {
      for (ox = 0; ox < out->w; ox++) {
        const int64_t acc = bias + window_sum(in, win, w, oy, ox, oc);
        int64_t v = rescale_wide(acc, scale, shift, round_mode) + out->zero_point;
        if (v < lo) v = lo;
        if (v > hi) v = hi;
        fm_write(out, npu->region[out->region], oy, ox, oc, v);
      }
    }
  }
  return 0;
}
