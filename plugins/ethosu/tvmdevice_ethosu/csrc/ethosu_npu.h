/*
 * The functional model of an Ethos-U55/U65: its register file as the command
 * stream sets it, and the operations it executes from it.
 *
 * Register and field layouts are Arm's register interface (ethos_u55_regs in
 * Vela's Python package; ethos_u65_interface.hpp in Vela's sources; the
 * driver's ethosu_interface.h): a cmd0 word sets a 16-bit register from its
 * parameter, a cmd1 word a 32-bit register from its payload (its parameter
 * holds the address's upper bits).  Nothing here allocates: a run's working
 * memory is the caller's.
 */
#ifndef TVMDEVICE_ETHOSU_NPU_H_
#define TVMDEVICE_ETHOSU_NPU_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Operations (cmd0 opcodes below 0x100). */
enum {
  ETHOSU_OP_STOP = 0x000,
  ETHOSU_OP_CONV = 0x002,
  ETHOSU_OP_DEPTHWISE = 0x003,
  ETHOSU_OP_POOL = 0x005,
  ETHOSU_OP_ELEMENTWISE = 0x006,
  ETHOSU_OP_DMA_START = 0x010,
  ETHOSU_OP_DMA_WAIT = 0x011,
  ETHOSU_OP_KERNEL_WAIT = 0x012
};

/* 16-bit registers (cmd0 opcodes from 0x100). */
enum {
  R_IFM_PAD_TOP = 0x100, R_IFM_PAD_LEFT = 0x101, R_IFM_PAD_RIGHT = 0x102, R_IFM_PAD_BOTTOM = 0x103,
  R_IFM_DEPTH_M1 = 0x104, R_IFM_PRECISION = 0x105, R_IFM_UPSCALE = 0x107, R_IFM_ZERO_POINT = 0x109,
  R_IFM_WIDTH0_M1 = 0x10a, R_IFM_HEIGHT0_M1 = 0x10b, R_IFM_HEIGHT1_M1 = 0x10c, R_IFM_REGION = 0x10f,
  R_OFM_WIDTH_M1 = 0x111, R_OFM_HEIGHT_M1 = 0x112, R_OFM_DEPTH_M1 = 0x113, R_OFM_PRECISION = 0x114,
  R_OFM_ZERO_POINT = 0x118, R_OFM_WIDTH0_M1 = 0x11a, R_OFM_HEIGHT0_M1 = 0x11b, R_OFM_HEIGHT1_M1 = 0x11c,
  R_OFM_REGION = 0x11f, R_KERNEL_WIDTH_M1 = 0x120, R_KERNEL_HEIGHT_M1 = 0x121, R_KERNEL_STRIDE = 0x122,
  R_ACC_FORMAT = 0x124, R_ACTIVATION = 0x125, R_ACTIVATION_MIN = 0x126, R_ACTIVATION_MAX = 0x127,
  R_WEIGHT_REGION = 0x128, R_SCALE_REGION = 0x129, R_DMA0_SRC_REGION = 0x130, R_DMA0_DST_REGION = 0x131,
  R_DMA0_SIZE0 = 0x132, R_DMA0_SIZE1 = 0x133,
  R_IFM2_BROADCAST = 0x180, R_IFM2_SCALAR = 0x181, R_IFM2_PRECISION = 0x185, R_IFM2_ZERO_POINT = 0x189,
  R_IFM2_WIDTH0_M1 = 0x18a, R_IFM2_HEIGHT0_M1 = 0x18b, R_IFM2_HEIGHT1_M1 = 0x18c, R_IFM2_REGION = 0x18f
};

/* 32-bit registers (cmd1 opcodes). */
enum {
  R1_IFM_BASE0 = 0x00, R1_IFM_BASE1 = 0x01, R1_IFM_BASE2 = 0x02, R1_IFM_BASE3 = 0x03,
  R1_IFM_STRIDE_X = 0x04, R1_IFM_STRIDE_Y = 0x05, R1_IFM_STRIDE_C = 0x06,
  R1_OFM_BASE0 = 0x10, R1_OFM_BASE1 = 0x11, R1_OFM_BASE2 = 0x12, R1_OFM_BASE3 = 0x13,
  R1_OFM_STRIDE_X = 0x14, R1_OFM_STRIDE_Y = 0x15, R1_OFM_STRIDE_C = 0x16,
  R1_WEIGHT_BASE = 0x20, R1_WEIGHT_LENGTH = 0x21, R1_SCALE_BASE = 0x22, R1_SCALE_LENGTH = 0x23,
  R1_OFM_SCALE = 0x24, R1_OPA_SCALE = 0x25, R1_OPB_SCALE = 0x26,
  R1_DMA0_SRC = 0x30, R1_DMA0_DST = 0x31, R1_DMA0_LEN = 0x32,
  R1_IFM2_BASE0 = 0x80, R1_IFM2_STRIDE_X = 0x84, R1_IFM2_STRIDE_Y = 0x85, R1_IFM2_STRIDE_C = 0x86,
  R1_WEIGHT1_BASE = 0x90, R1_WEIGHT1_LENGTH = 0x91, R1_SCALE1_BASE = 0x92, R1_SCALE1_LENGTH = 0x93
};

#define ETHOSU_REGIONS 8
#define ETHOSU_LUT_BYTES 2048u
#define ETHOSU_LUT_SLOT_BYTES 256u

typedef struct ethosu_npu {
  uint16_t reg16[0x100];  /* cmd0 registers, by opcode - 0x100 */
  uint8_t set16[0x100];   /* 1 once the stream set it */
  uint32_t reg32[0x100];  /* cmd1 registers' payloads, by opcode */
  uint16_t hi32[0x100];   /* cmd1 registers' parameters (address bits above 32) */
  uint8_t set32[0x100];
  uint8_t* region[ETHOSU_REGIONS];      /* base addresses (NULL when only checking) */
  uint64_t region_size[ETHOSU_REGIONS]; /* bytes each region may be addressed */
  uint32_t read_only_regions;           /* bit r: region r is constant data no operation may write */
  uint32_t ofm_ublock_depth;            /* from the CONFIG driver action: MACs per cycle */
  uint32_t ifm_ublock_depth;
  uint32_t shram_bytes;                 /* from the CONFIG driver action: the shared buffer's size */
  uint8_t lut[ETHOSU_LUT_BYTES];        /* the internal LUT memory: the shared buffer's last 2 KB */
  uint8_t lut_loaded;                   /* bit t: LUT slot t (256 bytes) was loaded by a DMA of the stream */
  int16_t* weights;       /* working memory: dense weights, then the decoded stream */
  uint32_t weights_capacity;   /* int16 slots at `weights` */
  uint32_t weight_slots_needed; /* the most any operation checked so far needs */
  /* counters of the run */
  uint64_t commands, operations, macs, dma_bytes;
  /* what the model does not implement: the field's name (NULL when all is implemented) */
  const char* unsupported;
} ethosu_npu_t;

/* Execute (execute=1) or only check (execute=0) the operation `opcode` with the registers as set. */
int32_t ethosu_op_conv(ethosu_npu_t* npu, uint32_t opcode, int execute);
int32_t ethosu_op_dma(ethosu_npu_t* npu, int execute);
/* NPU_OP_POOL with the pooling mode of its parameter. */
int32_t ethosu_op_pool(ethosu_npu_t* npu, uint32_t mode, int execute);
/* NPU_OP_ELEMENTWISE with the elementwise mode of its parameter. */
int32_t ethosu_op_elementwise(ethosu_npu_t* npu, uint32_t mode, int execute);
/* 1 when the elementwise operation is one ethosu_op_elementwise_wide runs: a 32-bit IFM, IFM2 or
 * OFM, or the modes CLZ, SHR, SHL. */
int ethosu_elementwise_is_wide(const ethosu_npu_t* npu, uint32_t mode);
int32_t ethosu_op_elementwise_wide(ethosu_npu_t* npu, uint32_t mode, int execute);

/* NPU_OP_DMA_START into the internal LUT memory (DMA0_DST_REGION's region_mode internal). */
int32_t ethosu_op_dma_lut(ethosu_npu_t* npu, int execute);
/* The activation's LUT: 0 when ACTIVATION names no table, or a table the stream loaded, and the
 * clamp is the whole int8 range; else refuses.  Sets *table to the slot (-1: no table). */
int ethosu_lut_check(ethosu_npu_t* npu, int32_t* table);
/* An int8 OFM value through LUT slot `table` (a value already saturated to int8). */
static inline int32_t ethosu_lut_apply(const ethosu_npu_t* npu, int32_t table, int32_t value) {
  return (int32_t)(int8_t)npu->lut[(uint32_t)table * ETHOSU_LUT_SLOT_BYTES + (uint32_t)(value + 128)];
}

/* Working memory a run needs beside the regions, in bytes: `weight_slots` int16 weights. */
uint64_t ethosu_work_bytes(uint32_t weight_slots);

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_NPU_H_ */
