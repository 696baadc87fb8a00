/*
 * woofles kernels: parameter structs and entry points.
 *
 * Every kernel has the tvmdevice kernel ABI signature
 *   int32_t fn(const void* params, void* const* buffers, void* resource_handle)
 * where buffers are SRAM *device addresses* and resource_handle is the
 * tvm_device_woofles_t.  The parameter structs are declared once, as
 * Layouts in tvmdevice_woofles/params.py, and generated into
 * tvmd_woofles_params.h at build time.  They live in host memory, filled once at
 * compile time (like an NPU command stream); the per-channel requantization
 * tables they point to are host memory kept alive with them.  Every member
 * was validated in Python before a struct is handed out; the kernels still
 * check each buffer against the SRAM window.
 */
#ifndef TVMD_WOOFLES_KERNELS_H_
#define TVMD_WOOFLES_KERNELS_H_

#include <stdint.h>

#include "tvmdevice/kernel_abi.h"
#include "tvmd_woofles_params.h" /* generated from tvmdevice_woofles/params.py */

#ifdef __cplusplus
extern "C" {
#endif

/* params: tvmd_woofles_conv_params_t */
int32_t tvmd_woofles_conv2d_s8(const void* params, void* const* buffers, void* resource_handle);
int32_t tvmd_woofles_depthwise_conv2d_s8(const void* params, void* const* buffers, void* resource_handle);
/* params: tvmd_woofles_conv16_params_t (int16 activations, int8 filters) */
int32_t tvmd_woofles_conv2d_s16(const void* params, void* const* buffers, void* resource_handle);
int32_t tvmd_woofles_depthwise_conv2d_s16(const void* params, void* const* buffers, void* resource_handle);
/* params: tvmd_woofles_fc_params_t */
int32_t tvmd_woofles_fully_connected_s8(const void* params, void* const* buffers, void* resource_handle);
/* params: tvmd_woofles_fc16_params_t */
int32_t tvmd_woofles_fully_connected_s16(const void* params, void* const* buffers, void* resource_handle);
/* params: tvmd_woofles_pool_params_t */
int32_t tvmd_woofles_avg_pool2d_s8(const void* params, void* const* buffers, void* resource_handle);
int32_t tvmd_woofles_max_pool2d_s8(const void* params, void* const* buffers, void* resource_handle);
int32_t tvmd_woofles_avg_pool2d_s16(const void* params, void* const* buffers, void* resource_handle);
int32_t tvmd_woofles_max_pool2d_s16(const void* params, void* const* buffers, void* resource_handle);
/* params: tvmd_woofles_add_params_t */
int32_t tvmd_woofles_add_s8(const void* params, void* const* buffers, void* resource_handle);
int32_t tvmd_woofles_add_s16(const void* params, void* const* buffers, void* resource_handle);
/* params: tvmd_woofles_minmax_params_t */
int32_t tvmd_woofles_maximum_s8(const void* params, void* const* buffers, void* resource_handle);
int32_t tvmd_woofles_minimum_s8(const void* params, void* const* buffers, void* resource_handle);
/* params: tvmd_woofles_transpose_conv_params_t */
int32_t tvmd_woofles_transpose_conv_s8(const void* params, void* const* buffers, void* resource_handle);
/* params: tvmd_woofles_pad_params_t (PAD and PADV2) */
int32_t tvmd_woofles_pad_s8(const void* params, void* const* buffers, void* resource_handle);
int32_t tvmd_woofles_pad_s16(const void* params, void* const* buffers, void* resource_handle);

/* params: tvmd_woofles_copy_params_t; buffers {src, dst}: the executor's copy steps (woofles_copy.c),
 * not operators: a synchronous DMA transfer host -> SRAM, and SRAM -> host. */
int32_t tvmd_woofles_copy_to_device(const void* params, void* const* buffers, void* resource_handle);
int32_t tvmd_woofles_copy_from_device(const void* params, void* const* buffers, void* resource_handle);
/* The two copy kernels, to device first. */
extern const tvmd_kernel_t tvmd_woofles_copy_kernels[];

/* Every kernel above, in one table (woofles_kernel_table.c). */
extern const tvmd_kernel_t tvmd_woofles_kernels[];
extern const uint32_t tvmd_woofles_num_kernels;

#ifdef __cplusplus
}
#endif
#endif /* TVMD_WOOFLES_KERNELS_H_ */
