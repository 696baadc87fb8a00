#ifndef TVMD_ETHOSU_ELEMENTWISE_H_
#define TVMD_ETHOSU_ELEMENTWISE_H_
/* What the 8-bit and the wide NPU_OP_ELEMENTWISE share: the modes, the broadcast register's fields
 * and the checks of the operands' shapes and regions. */
#include <stdint.h>

#include "ethosu_fmap.h"
#include "ethosu_npu.h"

/* elementwise_mode (Arm's register interface). */
enum { EW_MUL = 0, EW_ADD = 1, EW_SUB = 2, EW_MIN = 3, EW_MAX = 4, EW_CLZ = 7, EW_SHR = 8, EW_SHL = 9 };

/* NPU_SET_IFM2_BROADCAST's fields (Arm's register interface: npu_set_ifm2_broadcast_t). */
#define BROADCAST_H(p) ((p) & 1u)
#define BROADCAST_W(p) ((p) >> 1 & 1u)
#define BROADCAST_C(p) ((p) >> 2 & 1u)
#define OPERAND_ORDER_A(p) ((p) >> 6 & 1u)
#define BROADCAST_SCALAR(p) ((p) >> 7 & 1u)

/* 0 when the OFM is one tile, the IFM (and, `with_ifm2` and not a scalar, IFM2 under the broadcast
 * `bc`) covers it, every operand lies inside its region and the OFM's region is writable; else
 * refuses naming the register. */
int ethosu_elementwise_shapes(ethosu_npu_t* npu, const fmap_t* in, const fmap_t* in2, const fmap_t* out,
                              uint32_t bc, int with_ifm2);

/* 0 when a scaled mode's (MUL, ADD, SUB) largest product or combined sum, times `multiplier` (the OFM
 * scale, 1 for a 32-bit OFM), fits the 64 bits the rescale computes in; else refuses with OFM_SCALE.  A
 * register setting (zero points far from the data, a large scale) could otherwise overflow it. */
int ethosu_elementwise_rescale_check(ethosu_npu_t* npu, uint32_t mode, const fmap_t* in, const fmap_t* in2,
                                     uint32_t bc, uint64_t multiplier);

#endif /* TVMD_ETHOSU_ELEMENTWISE_H_ */
