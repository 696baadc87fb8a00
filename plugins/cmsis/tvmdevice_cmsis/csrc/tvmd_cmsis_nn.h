/*
 * cmsis-nn device kernels: the public header.
 *
 * Every kernel has the tvmdevice kernel-call ABI signature
 *
 *   int32_t tvmd_cmsis_<op>_s8(const void* params, void* const* buffers,
 *                              void* resource_handle);
 *
 * and a scratch size query tvmd_cmsis_<op>_s8_get_buffer_size(params), the
 * cmsis_nn_context contract: the caller allocates that many bytes (through
 * the device's AllocWorkspace) and passes them as the last buffer.
 *
 * Buffers: the operator's inputs in operator order (NULL for an absent bias;
 * no slot at all when the operator lists only two inputs: num_inputs says
 * which), then its output, then scratch when the size query is non-zero.
 *
 * Params are prepared once, on the host, by tvmdevice_cmsis: every shape,
 * stride and quantization parameter here has been validated against the
 * buffers' sizes, so the kernels only check what is cheap (NULL pointers,
 * the params kind tag, the device state).  Kernels never allocate.
 *
 * Portable C99; no Python, no I/O.
 */
#ifndef TVMD_CMSIS_NN_H_
#define TVMD_CMSIS_NN_H_

#include <stddef.h>
#include <stdint.h>

#include "tvmdevice/c_device_api.h"

/* The kernel enum, the params structs, the kernels' prototypes and the
 * constants shared with the Python packing are generated from the plugin's
 * kernel table (tvmdevice_cmsis/kernel_table.py) at build time. */
#include "tvmd_cmsis_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Output pixels the convolution GEMM processes per block (im2col rows). */
#define TVMD_CMSIS_CONV_ROWS 4

/* Requantize n int32 accumulators with per-channel multipliers (>= 0) and
 * shifts (-31..30), add the output offset, clamp and narrow to int8.
 * Bit-exact with tvmd_multiply_by_quantized_multiplier (tvmdevice/quant.h),
 * written so the compiler can vectorize it; exposed for the equivalence
 * test. */
void tvmd_cmsis_requantize_s8(const int32_t* acc, const int32_t* multiplier, const int32_t* shift,
                              int32_t n, const tvmd_cmsis_quant_t* q, int8_t* out);

/* Use the CPU's accelerated path when it has one (1, the default) or force
 * the portable C path (0); returns whether the accelerated path is now used.
 * Both compute identical values; this exists so tests can check both. */
int tvmd_cmsis_set_simd(int enabled);

/* Force one SIMD level: 0 the portable C, 1 x86-64 AVX2, 2 x86-64 AVX-512
 * (F/BW), 3 AVX2 + AVX-VNNI, 4 AVX-512 (F/BW/VL) + AVX-512 VNNI.  Returns
 * the level now used, or -1 (nothing changed) when the CPU lacks it.  All
 * levels compute identical values; tests run each. */
int tvmd_cmsis_set_simd_level(int level);

/* The SIMD levels this CPU runs, bit L for level L (bit 0 always; every
 * level when the build is emulated, see tvmd_cmsis_simd_emulated). */
int tvmd_cmsis_simd_levels(void);

/* The level the kernels use by default: the highest-numbered one the CPU
 * runs (0 off x86-64). */
int tvmd_cmsis_max_simd_level(void);

/* 1 when the x86 SIMD paths were compiled against SIMDe (portable C
 * emulating the intrinsics: every level available, none of them fast). */
int tvmd_cmsis_simd_emulated(void);

#ifdef __cplusplus
}
#endif
#endif /* TVMD_CMSIS_NN_H_ */
