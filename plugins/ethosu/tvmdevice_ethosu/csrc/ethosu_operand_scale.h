/*
 * The operand scaling of NPU_OP_ELEMENTWISE's ADD and SUB, as IFM_PRECISION's
 * scale_mode selects it (Arm's register interface: ifm_scale_mode):
 *
 *   OPA_OPB_16  both operands times their 16-bit scales (OPA_SCALE, OPB_SCALE),
 *               which Vela emits equal (its "simplified" scaling);
 *   OPA_32      operand A rescaled by the 32-bit OPA_SCALE and its shift,
 *   OPB_32      operand B rescaled by OPA_SCALE and its shift; the other
 *               operand is multiplied by 2^19 for 8-bit feature maps, 2^14 for
 *               16-bit ones (Vela's "advanced" scaling, for inputs of
 *               different scales).
 *
 * Where each rule comes from is in docs/ethos-u.md.
 */
#ifndef TVMDEVICE_ETHOSU_OPERAND_SCALE_H_
#define TVMDEVICE_ETHOSU_OPERAND_SCALE_H_

#include <stdint.h>

#include "ethosu_npu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when the model implements the operand scaling the registers hold; else refuses naming the field. */
int ethosu_operand_scale_check(ethosu_npu_t* npu);

/* At least the magnitude of A' + B' for operands of magnitude at most a and b. */
uint64_t ethosu_operand_scale_bound(const ethosu_npu_t* npu, uint64_t a, uint64_t b);

/* A + B (subtract: A - B) after each operand's scaling; a and b are read less their zero points. */
int64_t ethosu_operand_scale_combine(const ethosu_npu_t* npu, int64_t a, int64_t b, int subtract);

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_OPERAND_SCALE_H_ */
