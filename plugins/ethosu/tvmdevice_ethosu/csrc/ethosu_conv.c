/*
 * NPU_OP_CONV and NPU_OP_DEPTHWISE: a convolution over the IFM with the
 * weights the stream points at (Vela's compressed weight stream, decoded by
 * ethosu_weights.c, in the order Vela's weight encoder lays them out), and
 * per-channel bias/scale records, rescaled as TOSA's RESCALE defines it.
 *
 * Every field value this file does not implement is refused by name in check
 * mode, before anything runs: 8-bit signed IFM and OFM only, NHWC or
 * NHCWB16, one IFM/OFM tile, no upscaling, 32-bit accumulators, per-channel
 * scaling with TFL (double) rounding, clamping activation or an int8 LUT.
 */
#include <string.h>

#include "ethosu_conv_wide.h"
#include "ethosu_fmap.h"
#include "ethosu_npu.h"
#include "ethosu_weights.h"
#ifdef TVMD_ETHOSU_WEIGHT_CACHE
#include "ethosu_weight_cache.h"
#endif

/* The order Vela's Ethos-U55 weight encoder writes weights in (EthosUWeightOrdering in Vela's
 * ethos_u55_weight_encoder.cpp): calls `put` with each encoded position's (o, y, x, i), or -1
 * for a padding position. */
typedef struct {
  int32_t ofm_depth, ifm_depth, kh, kw;
  int32_t ofm_block_depth, ifm_block_depth, ofm_ublock, ifm_ublock, decomp_x, decomp_y, round;
  int depthwise, part_kernel;
} order_t;

/* The positions of OFM channels [ob_begin, ob_end) (whole OFM blocks: the stream holds each block's
 * weights one after another), `decoded` holding them from the first; `ohwi` gets channel ob_begin
 * first.  With `ohwi` NULL, only counts the positions (the range's length in the stream). */
static int64_t place_weights(const order_t* o, const int16_t* decoded, int64_t count, int16_t* ohwi,
                             int32_t ob_begin, int32_t ob_end) {
  int64_t n = 0;
  int32_t ob, ib, sy, sx, outer, ou, el, inner, oz, iz;
  const int32_t src_i = o->depthwise ? 1 : o->ifm_depth;
  for (ob = ob_begin; ob < ob_end; ob += o->ofm_block_depth) {
    const int32_t ob_depth = o->ofm_depth - ob < o->ofm_block_depth ? o->ofm_depth - ob : o->ofm_block_depth;
    for (ib = 0; ib < (o->depthwise ? 1 : o->ifm_depth); ib += o->ifm_block_depth) {
      int32_t ib_depth = o->depthwise ? o->ifm_ublock : o->ifm_block_depth;
      if (!o->depthwise && o->part_kernel && o->ifm_depth - ib < ib_depth) ib_depth = o->ifm_depth - ib;
      for (sy = 0; sy < o->kh; sy += o->decomp_y) {
        const int32_t sub_h = o->kh - sy < o->decomp_y ? o->kh - sy : o->decomp_y;
        for (sx = 0; sx < o->kw; sx += o->decomp_x) {
          const int32_t sub_w = o->kw - sx < o->decomp_x ? o->kw - sx : o->decomp_x;
          const int32_t elements = (sub_w * sub_h + o->round - 1) / o->round * o->round;
          const int32_t outer_depth = o->part_kernel ? ib_depth : 1;
          const int32_t inner_depth = o->part_kernel ? 1 : ib_depth;
          for (outer = 0; outer < outer_depth; outer += o->ifm_ublock) {
            for (ou = 0; ou < ob_depth; ou += o->ofm_ublock) {
              for (el = 0; el < elements; el++) {
                const int32_t kx = el % sub_w, ky = el / sub_w;
                for (inner = 0; inner < inner_depth; inner += o->ifm_ublock) {
                  for (oz = 0; oz < o->ofm_ublock; oz++) {
                    for (iz = 0; iz < (o->depthwise ? 1 : o->ifm_ublock); iz++) {
                      const int32_t i = ib + inner + outer + iz, oc = ob + ou + oz;
                      if (n >= count) return -1; /* the stream holds fewer weights than the layout */
                      if (ohwi != NULL && i < src_i && oc < o->ofm_depth && ky < sub_h) {
                        ohwi[((int64_t)((oc - ob_begin) * o->kh + sy + ky) * o->kw + sx + kx) * src_i + i] =
                            decoded[n];
                      }
                      n++;
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return n;
}

/* The rescaled value plus the OFM zero point, clamped by the activation and to int8, written. */
static void write_ofm(ethosu_npu_t* npu, const fmap_t* out, int32_t y, int32_t x, int32_t c, int64_t scaled,
                      int32_t act_min, int32_t act_max, int32_t table) {
  int64_t v = scaled + out->zero_point;
  if (v < act_min) v = act_min;
  if (v > act_max) v = act_max;
  if (v < -128) v = -128;
  if (v > 127) v = 127;
  if (table >= 0) v = ethosu_lut_apply(npu, table, (int32_t)v);
  ((int8_t*)npu->region[out->region])[fm_offset(out, y, x, c)] = (int8_t)v;
}

int32_t ethosu_op_conv(ethosu_npu_t* npu, uint32_t opcode, int execute) {
  const int depthwise = opcode == ETHOSU_OP_DEPTHWISE;
  const uint32_t ifm_prec = REG(npu, R_IFM_PRECISION), ofm_prec = REG(npu, R_OFM_PRECISION);
  const int wide = (ifm_prec >> 2 & 3u) == 1u; /* a 16-bit IFM: conv_wide.h */
  const uint32_t kstride = REG(npu, R_KERNEL_STRIDE), act = REG(npu, R_ACTIVATION);
  const int32_t stride_x = 1 + (int32_t)((kstride & 1u) | ((kstride >> 6 & 1u) << 1));
  const int32_t stride_y = 1 + (int32_t)((kstride >> 1 & 1u) | ((kstride >> 9 & 1u) << 1));
  const int32_t dil_x = 1 + (int32_t)(kstride >> 3 & 1u), dil_y = 1 + (int32_t)(kstride >> 4 & 1u);
  const int32_t kh_ext = REG(npu, R_KERNEL_HEIGHT_M1) + 1, kw_ext = REG(npu, R_KERNEL_WIDTH_M1) + 1;
  const int32_t kh = (kh_ext - 1) / dil_y + 1, kw = (kw_ext - 1) / dil_x + 1;
  const int32_t pad_top = REG(npu, R_IFM_PAD_TOP), pad_left = REG(npu, R_IFM_PAD_LEFT);
  const int32_t pad_bottom = REG(npu, R_IFM_PAD_BOTTOM), pad_right = REG(npu, R_IFM_PAD_RIGHT);
  const int32_t act_min = sext16(REG(npu, R_ACTIVATION_MIN)), act_max = sext16(REG(npu, R_ACTIVATION_MAX));
  fmap_t in, out;
  order_t order;
  uint32_t wregion, sregion;
  uint64_t wbase, wlen, sbase, slen, weight_count, block_slots, longest; /* longest: an OFM block's stream */
  const int16_t* weights; /* every OFM block's dense weights, OHWI (depthwise: O, H, W), when kept whole */
  int32_t oy, ox, oc, table;

  npu->unsupported = NULL;
  if (wide) {
    if (conv_wide_check(npu, ifm_prec, ofm_prec)) return 1;
  } else {
    if ((ifm_prec & 1u) != 1u || (ifm_prec >> 2 & 3u) != 0u) {
      return ethosu_refuse(npu, "IFM_PRECISION (not signed 8- or 16-bit)");
    }
    if ((ifm_prec >> 14 & 3u) != 0u) return ethosu_refuse(npu, "IFM_PRECISION round_mode (not TFL)");
    if ((ofm_prec & 1u) != 1u || (ofm_prec >> 1 & 3u) != 0u) return ethosu_refuse(npu, "OFM_PRECISION (not signed 8-bit)");
    if ((ofm_prec >> 14 & 3u) != 0u) return ethosu_refuse(npu, "OFM_PRECISION round_mode (not TFL)");
    if (REG(npu, R_ACC_FORMAT) != 0u) return ethosu_refuse(npu, "ACC_FORMAT (not 32-bit integer)");
  }
  if ((ifm_prec >> 6 & 3u) > 1u) return ethosu_refuse(npu, "IFM_PRECISION format");
  if ((ofm_prec >> 6 & 3u) > 1u) return ethosu_refuse(npu, "OFM_PRECISION format");
  if ((ofm_prec >> 8 & 1u) != 0u) return ethosu_refuse(npu, "OFM_PRECISION scale_mode (not per channel)");
  if (REG(npu, R_IFM_UPSCALE) != 0u) return ethosu_refuse(npu, "IFM_UPSCALE");
  if (ethosu_lut_check(npu, &table)) return 1;
  if (wide && table >= 0) return ethosu_refuse(npu, "ACTIVATION (a LUT after a 16-bit convolution)");
  if ((act >> 12 & 0xFu) != 0u) return ethosu_refuse(npu, "ACTIVATION clip range");
  if ((kstride >> 5 & 1u) != 0u) return ethosu_refuse(npu, "KERNEL_STRIDE decomposition");
  if (npu->set32[R1_WEIGHT1_LENGTH] && npu->reg32[R1_WEIGHT1_LENGTH] != 0u) return ethosu_refuse(npu, "WEIGHT1 (dual core)");
  if (npu->ofm_ublock_depth == 0u) return ethosu_refuse(npu, "CONFIG (no Ethos-U55 configuration)");

  ethosu_ifm(npu, &in);
  ethosu_ofm(npu, &out);
  if (REG(npu, R_OFM_HEIGHT0_M1) != REG(npu, R_OFM_HEIGHT_M1) || REG(npu, R_OFM_WIDTH0_M1) != REG(npu, R_OFM_WIDTH_M1)) {
    return ethosu_refuse(npu, "OFM tiles (OFM_HEIGHT0_M1/OFM_WIDTH0_M1 short of the OFM)");
  }
  /* Every IFM read past tile 0 must fall in the bottom/right padding: no other tile is read. */
  if ((out.h - 1) * stride_y - pad_top + kh_ext - 1 >= in.h + pad_bottom ||
      (out.w - 1) * stride_x - pad_left + kw_ext - 1 >= in.w + pad_right) {
    return ethosu_refuse(npu, "IFM tiles (reads beyond IFM tile 0)");
  }
  if (depthwise && in.c != out.c) return ethosu_refuse(npu, "DEPTHWISE depth multiplier");
  if (wide && conv_wide_window_check(npu, &in, (uint64_t)kh * (uint64_t)kw * (uint64_t)(depthwise ? 1 : in.c))) {
    return 1;
  }
  if (ethosu_fm_in_region(npu, &in, "IFM addresses (outside the region)")) return 1;
  if (ethosu_fm_in_region(npu, &out, "OFM addresses (outside the region)")) return 1;
  if (npu->read_only_regions >> out.region & 1u) return ethosu_refuse(npu, "OFM_REGION (read-only)");

  wregion = REG(npu, R_WEIGHT_REGION) & 7u;
  sregion = REG(npu, R_SCALE_REGION) & 7u;
  wbase = reg_addr(npu, R1_WEIGHT_BASE);
  wlen = npu->reg32[R1_WEIGHT_LENGTH];
  sbase = reg_addr(npu, R1_SCALE_BASE);
  slen = npu->reg32[R1_SCALE_LENGTH];
  if (wbase + wlen > npu->region_size[wregion] || wlen == 0u) return ethosu_refuse(npu, "WEIGHT_BASE/LENGTH");
  if (sbase + slen > npu->region_size[sregion] || slen < 10u * (uint64_t)out.c) return ethosu_refuse(npu, "SCALE_BASE/LENGTH");

  weight_count = (uint64_t)out.c * (uint64_t)kh * (uint64_t)kw * (uint64_t)(depthwise ? 1 : in.c);
  memset(&order, 0, sizeof(order)); /* compared whole by the host's weight cache */
  order.ofm_depth = out.c;
  order.ifm_depth = depthwise ? 1 : in.c;
  order.kh = kh;
  order.kw = kw;
  order.ofm_block_depth = REG(npu, 0x117) + 1; /* OFM_BLK_DEPTH_M1: the weight encoder's OFM block */
  order.part_kernel = (int)(kstride >> 2 & 1u);
  order.depthwise = depthwise;
  order.ifm_block_depth = order.part_kernel || wide ? 16 : 32;
  order.ofm_ublock = (int32_t)npu->ofm_ublock_depth;
  order.ifm_ublock = (int32_t)npu->ifm_ublock_depth;
  order.decomp_x = 8 / dil_x;
  order.decomp_y = 8 / dil_y;
  order.round = depthwise ? 4 : order.part_kernel ? (wide ? 2 : 4) : 1;
  {
    /* The functional model's memory, as the NPU's weight decoder works: one OFM block at a time, its
     * dense weights, then its decoded stream, then (reusing it) one IFM window, gathered. */
    const uint64_t per_oc = (uint64_t)kh * (uint64_t)kw * (uint64_t)(depthwise ? 1 : in.c);
    const uint64_t window = depthwise ? 0u : per_oc;
    uint64_t need;
    int32_t ob;
    longest = 0;
    for (ob = 0; ob < out.c; ob += order.ofm_block_depth) {
      const int32_t ob_end = out.c - ob < order.ofm_block_depth ? out.c : ob + order.ofm_block_depth;
      const uint64_t len = (uint64_t)place_weights(&order, NULL, INT64_MAX, NULL, ob, ob_end);
      if (len > longest) longest = len;
    }
    block_slots = (uint64_t)(out.c < order.ofm_block_depth ? out.c : order.ofm_block_depth) * per_oc;
    need = block_slots + (longest > window ? longest : window);
    if (need > UINT32_MAX) return ethosu_refuse(npu, "weights (over 4G)");
    if (need > npu->weight_slots_needed) npu->weight_slots_needed = (uint32_t)need;
    if (execute && need > npu->weights_capacity) return ethosu_refuse(npu, "weights (beyond the working memory)");
  }
  if (!execute) return 0;

  weights = NULL; /* all OFM blocks' dense weights at once: the host's weight cache only */
#ifdef TVMD_ETHOSU_WEIGHT_CACHE
  /* the host decodes a stream once: the same bytes laid out the same way give the same weights */
  if (ethosu_weight_cache_on()) {
    weights = ethosu_cached_weights(npu->region[wregion] + wbase, (uint32_t)wlen, &order, sizeof(order),
                                    (uint32_t)weight_count);
  }
  if (weights == NULL && ethosu_weight_cache_on()) {
    const uint64_t layout = (uint64_t)place_weights(&order, NULL, INT64_MAX, NULL, 0, out.c);
    int16_t* dense = ethosu_weight_cache_work(weight_count + layout);
    int32_t n;
    if (dense == NULL || weight_count + layout > UINT32_MAX) return ethosu_refuse(npu, "weights (out of host memory)");
    n = ethosu_mlw_decode_window(npu->region[wregion] + wbase, (uint32_t)wlen, 0, dense + weight_count,
                                 (uint32_t)layout);
    if (n < 0) return ethosu_refuse(npu, "weight stream (malformed)");
    memset(dense, 0, (size_t)weight_count * sizeof(int16_t));
    if (place_weights(&order, dense + weight_count, n, dense, 0, out.c) < 0) {
      return ethosu_refuse(npu, "weight stream (shorter than its layout)");
    }
    ethosu_keep_weights(npu->region[wregion] + wbase, (uint32_t)wlen, &order, sizeof(order), dense,
                        (uint32_t)weight_count);
    weights = dense;
  }
#endif
  in.data = (const int8_t*)(npu->region[in.region]);
  {
    const int32_t per_oc = kh * kw * (depthwise ? 1 : in.c);
    uint32_t start = 0; /* the stream's position of the block's first weight */
    int32_t ob;
    for (ob = 0; ob < out.c; ob += order.ofm_block_depth) {
      const int32_t ob_end = out.c - ob < order.ofm_block_depth ? out.c : ob + order.ofm_block_depth;
      const int16_t* wb; /* the block's dense weights: channel ob first */
      if (weights != NULL) {
        wb = weights + (int64_t)ob * per_oc;
      } else {
        /* decode the block's part of the stream (at most the longest block's) into the tail of the memory,
         * place it into its head; the block's length is what placing it consumed */
        int16_t* dense = npu->weights;
        int16_t* decoded = npu->weights + block_slots;
        const int32_t n = ethosu_mlw_decode_window(npu->region[wregion] + wbase, (uint32_t)wlen, start, decoded,
                                                   (uint32_t)longest);
        int64_t used;
        if (n < 0) return ethosu_refuse(npu, "weight stream (malformed)");
        memset(dense, 0, (size_t)(ob_end - ob) * (size_t)per_oc * sizeof(int16_t));
        used = (uint32_t)n < start ? -1 : place_weights(&order, decoded, (int64_t)((uint32_t)n - start), dense, ob, ob_end);
        if (used < 0) return ethosu_refuse(npu, "weight stream (shorter than its layout)");
        start += (uint32_t)used;
        wb = dense;
      }
      if (wide) {
        const conv_window_t win = {kh, kw, stride_y, stride_x, dil_y, dil_x, pad_top, pad_left, depthwise};
        if (conv_wide_block(npu, &in, &out, &win, wb, npu->region[sregion] + sbase, ob, ob_end, act_min, act_max)) {
          return 1;
        }
        continue;
      }
      if (depthwise) {
        for (oc = ob; oc < ob_end; oc++) {
          const uint64_t coff = in.nhcwb16 ? (uint64_t)(oc / 16) * in.stride_c + (uint64_t)(oc % 16) : (uint64_t)oc;
          const int16_t* w = wb + (int64_t)(oc - ob) * kh * kw;
          int64_t bias, scale;
          int32_t shift;
          ethosu_scale_record(npu->region[sregion] + sbase + 10u * (uint64_t)oc, &bias, &scale, &shift);
          for (oy = 0; oy < out.h; oy++) {
            for (ox = 0; ox < out.w; ox++) {
              int32_t acc = 0, ky, kx; /* 32-bit, as the NPU's ACC_FORMAT I32 and TFLM's accumulators */
              for (ky = 0; ky < kh; ky++) {
                const int32_t iy = oy * stride_y - pad_top + ky * dil_y;
                if (iy < 0 || iy >= in.h) continue; /* padding reads the zero point: contributes nothing */
                for (kx = 0; kx < kw; kx++) {
                  const int32_t ix = ox * stride_x - pad_left + kx * dil_x;
                  if (ix < 0 || ix >= in.w) continue;
                  acc += (in.data[in.base + (uint64_t)iy * in.stride_y + (uint64_t)ix * in.stride_x + coff] -
                          in.zero_point) * w[ky * kw + kx];
                }
              }
              write_ofm(npu, &out, oy, ox, oc, ethosu_apply_scale((int64_t)acc + bias, scale, shift, 0), act_min,
                        act_max, table);
            }
          }
        }
      } else {
        /* each output position's IFM window, less the zero point (padding: 0), gathered in OHWI's
         * (ky, kx, ic) order, then one dot product per output channel of the block */
        const int32_t window = per_oc;
        int16_t* patch = npu->weights + block_slots;
        for (oy = 0; oy < out.h; oy++) {
          for (ox = 0; ox < out.w; ox++) {
            int32_t ky, kx, ic, k = 0;
            for (ky = 0; ky < kh; ky++) {
              const int32_t iy = oy * stride_y - pad_top + ky * dil_y;
              for (kx = 0; kx < kw; kx++) {
                const int32_t ix = ox * stride_x - pad_left + kx * dil_x;
                if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) { /* padding reads the zero point */
                  for (ic = 0; ic < in.c; ic++) patch[k++] = 0;
                  continue;
                }
                {
                  const int8_t* px = in.data + in.base + (uint64_t)iy * in.stride_y + (uint64_t)ix * in.stride_x;
                  for (ic = 0; ic < in.c; ic++) {
                    const int8_t x = in.nhcwb16 ? px[(uint64_t)(ic / 16) * in.stride_c + (uint64_t)(ic % 16)] : px[ic];
                    patch[k++] = (int16_t)(x - in.zero_point);
                  }
                }
              }
            }
            for (oc = ob; oc < ob_end; oc++) {
              const int16_t* w = wb + (int64_t)(oc - ob) * window;
              int64_t bias, scale;
              int32_t shift, acc = 0, j;
              for (j = 0; j < window; j++) acc += patch[j] * w[j];
              ethosu_scale_record(npu->region[sregion] + sbase + 10u * (uint64_t)oc, &bias, &scale, &shift);
              write_ofm(npu, &out, oy, ox, oc, ethosu_apply_scale((int64_t)acc + bias, scale, shift, 0), act_min,
                        act_max, table);
            }
          }
        }
      }
    }
  }
  npu->macs += (uint64_t)out.h * (uint64_t)out.w * weight_count;
  return 0;
}

int32_t ethosu_op_dma(ethosu_npu_t* npu, int execute) {
  const uint32_t src_r = REG(npu, R_DMA0_SRC_REGION), dst_r = REG(npu, R_DMA0_DST_REGION);
  const uint64_t src = reg_addr(npu, R1_DMA0_SRC), dst = reg_addr(npu, R1_DMA0_DST);
  const uint64_t len = reg_addr(npu, R1_DMA0_LEN);
  npu->unsupported = NULL;
  if ((src_r >> 8 & 1u) || (dst_r >> 8 & 1u)) return ethosu_refuse(npu, "DMA0 region_mode (internal)");
  if ((src_r >> 9 & 3u) || (dst_r >> 9 & 3u)) return ethosu_refuse(npu, "DMA0 stride_mode (not 1-D)");
  if ((src_r & 0xFFu) >= ETHOSU_REGIONS || (dst_r & 0xFFu) >= ETHOSU_REGIONS) return ethosu_refuse(npu, "DMA0 region");
  if (npu->read_only_regions >> (dst_r & 0xFFu) & 1u) return ethosu_refuse(npu, "DMA0_DST_REGION (read-only)");
  if (src + len > npu->region_size[src_r & 0xFFu] || dst + len > npu->region_size[dst_r & 0xFFu]) {
    return ethosu_refuse(npu, "DMA0 addresses (outside the region)");
  }
  /* A zero-length transfer moves nothing; its region may be unset (NULL), and memmove must not see it. */
  if (!execute || len == 0) return 0;
  memmove(npu->region[dst_r & 0xFFu] + dst, npu->region[src_r & 0xFFu] + src, (size_t)len);
  npu->dma_bytes += len;
  return 0;
}

uint64_t ethosu_work_bytes(uint32_t weight_slots) {
  return (uint64_t)weight_slots * sizeof(int16_t);
}
