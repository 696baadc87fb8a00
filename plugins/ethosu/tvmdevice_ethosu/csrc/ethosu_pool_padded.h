/*
 * NPU_OP_POOL over padding (IFM_PAD_* not all 0): the windows that cross the
 * IFM's edge read only the IFM's elements.  A max pool takes their maximum; an
 * average pool divides their sum by their count as TOSA's AVG_POOL2D does
 * (reciprocal_scale, one rounding).  Where these rules come from is in
 * docs/ethos-u.md.
 */
#ifndef TVMDEVICE_ETHOSU_POOL_PADDED_H_
#define TVMDEVICE_ETHOSU_POOL_PADDED_H_

#include <stdint.h>

#include "ethosu_npu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the registers declare padding. */
int ethosu_pool_is_padded(const ethosu_npu_t* npu);

/* The padded pooling (average: 1, max: 0) after the checks every pooling shares (precisions, OFM
 * scale set, upscale, the LUT `table` or -1, dilation); checks the rest, then runs it when `execute`.
 * Returns 0, or 1 when refused (npu->unsupported names the field). */
int32_t ethosu_pool_padded(ethosu_npu_t* npu, int average, int32_t table, int execute);

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_POOL_PADDED_H_ */
