/*
 * NPU_OP_CONV and NPU_OP_DEPTHWISE on a signed 16-bit IFM (int16x8: 16-bit feature
 * maps, 8-bit weights): 40-bit accumulators, the per-channel records' bias, scale
 * and shift, the OFM's round mode. The weight decoding and the order of the
 * weights are ethosu_conv.c's; this file holds the arithmetic.
 */
#ifndef TVMDEVICE_ETHOSU_CONV_WIDE_H_
#define TVMDEVICE_ETHOSU_CONV_WIDE_H_

#include <stdint.h>

#include "ethosu_fmap.h"
#include "ethosu_npu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's geometry as the registers give it (KERNEL_*, IFM_PAD_TOP/LEFT). */
typedef struct {
  int32_t kh, kw, stride_y, stride_x, dil_y, dil_x, pad_top, pad_left;
  int depthwise;
} conv_window_t;

/* One OFM channel's bias/scale record (10 bytes): 40-bit signed bias, 32-bit scale, 6-bit shift. */
void ethosu_scale_record(const uint8_t* rec, int64_t* bias, int64_t* scale, int32_t* shift);

/* 0 when the IFM/OFM precisions and ACC_FORMAT of a convolution on a 16-bit IFM are implemented
 * (signed 16-bit IFM, signed 8- or 16-bit OFM, 40-bit accumulators, TFL or NATURAL rounding);
 * else refuses naming the field. */
int conv_wide_check(ethosu_npu_t* npu, uint32_t ifm_prec, uint32_t ofm_prec);

/* 0 when no IFM can take the products of a window of `window` elements (weights of 8 bits with
 * their zero point removed: |w| <= 255) beyond 2^38, half the 40-bit accumulator's range (the bias
 * has the other half, checked per channel when the records are read); else refuses naming ACC_FORMAT. */
int conv_wide_window_check(ethosu_npu_t* npu, const fmap_t* in, uint64_t window);

/* OFM channels [ob, ob_end) of a convolution (or depthwise) on a 16-bit IFM: `weights` holds
 * their dense weights (OHWI, depthwise O, H, W) from channel ob, `records` the first channel's
 * bias/scale record. Refuses (returns 1) a channel whose 40-bit accumulator some IFM could
 * overflow, before writing any of the block's outputs. */
int conv_wide_block(ethosu_npu_t* npu, const fmap_t* in, const fmap_t* out, const conv_window_t* win,
                    const int16_t* weights, const uint8_t* records, int32_t ob, int32_t ob_end, int32_t act_min,
                    int32_t act_max);

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_CONV_WIDE_H_ */
