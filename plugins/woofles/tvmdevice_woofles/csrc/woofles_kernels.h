/*
 * woofles kernels: parameter structs and entry points.
 *
 * Every kernel has the tvmdevice kernel ABI signature
 *   int32_t fn(const void* params, void* const* buffers, void* resource_handle)
 * where buffers are SRAM *device addresses* and resource_handle is the
 * tvm_device_woofles_t.  The parameter structs live in host memory, filled
 * once at compile time (like an NPU command stream); the per-channel
 * requantization tables they point to are host memory owned by the Python
 * params object.  Every field was validated in Python before a struct is
 * handed out; the kernels still check each buffer against the SRAM window.
 */
#ifndef TVMD_WOOFLES_KERNELS_H_
#define TVMD_WOOFLES_KERNELS_H_

#include <stdint.h>

#include "tvmdevice/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CONV_2D and DEPTHWISE_CONV_2D.  Buffers: input, filter, [bias or NULL], output. */
typedef struct {
  int32_t batches, in_h, in_w, in_ch;
  int32_t out_h, out_w, out_ch;
  int32_t filter_h, filter_w;
  int32_t filter_in_ch;     /* CONV_2D: input channels per group (filter dim 3) */
  int32_t depth_multiplier; /* DEPTHWISE_CONV_2D: out_ch / in_ch */
  int32_t stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w;
  int32_t input_offset, output_offset; /* -input zero point, output zero point */
  int32_t act_min, act_max;
  int32_t num_inputs; /* 2 or 3: index of the output buffer */
  const int32_t* multiplier; /* out_ch entries */
  const int32_t* shift;      /* out_ch entries; > 0 is a left shift */
} tvmd_woofles_conv_params_t;

/* FULLY_CONNECTED.  Buffers: input, weights [out_ch, accum_depth], [bias or NULL], output. */
typedef struct {
  int32_t batches, accum_depth, out_ch;
  int32_t input_offset, filter_offset, output_offset;
  int32_t act_min, act_max;
  int32_t num_inputs;
  const int32_t* multiplier; /* out_ch entries (repeated for per-tensor weights) */
  const int32_t* shift;
} tvmd_woofles_fc_params_t;

/* AVERAGE_POOL_2D and MAX_POOL_2D.  Buffers: input, output. */
typedef struct {
  int32_t batches, in_h, in_w, channels, out_h, out_w;
  int32_t filter_h, filter_w, stride_h, stride_w, pad_h, pad_w;
  int32_t act_min, act_max;
} tvmd_woofles_pool_params_t;

/* ADD with broadcasting up to rank 4.  Buffers: input1, input2, output. */
typedef struct {
  int32_t out_shape[4];   /* output shape, padded with leading 1s */
  int32_t in1_strides[4]; /* element strides of input1 over out_shape; 0 where broadcast */
  int32_t in2_strides[4];
  int32_t in1_size, in2_size; /* elements */
  int32_t input1_offset, input2_offset, output_offset;
  int32_t left_shift;
  int32_t input1_multiplier, input1_shift;
  int32_t input2_multiplier, input2_shift;
  int32_t output_multiplier, output_shift; /* shifts <= 0 */
  int32_t act_min, act_max;
} tvmd_woofles_add_params_t;

int32_t tvmd_woofles_conv2d_s8(const void* params, void* const* buffers, void* resource_handle);
int32_t tvmd_woofles_depthwise_conv2d_s8(const void* params, void* const* buffers, void* resource_handle);
int32_t tvmd_woofles_fully_connected_s8(const void* params, void* const* buffers, void* resource_handle);
int32_t tvmd_woofles_avg_pool2d_s8(const void* params, void* const* buffers, void* resource_handle);
int32_t tvmd_woofles_max_pool2d_s8(const void* params, void* const* buffers, void* resource_handle);
int32_t tvmd_woofles_add_s8(const void* params, void* const* buffers, void* resource_handle);

/* Every kernel above, in one table (woofles_kernel_table.c). */
extern const tvmd_kernel_t tvmd_woofles_kernels[];
extern const uint32_t tvmd_woofles_num_kernels;

#ifdef __cplusplus
}
#endif
#endif /* TVMD_WOOFLES_KERNELS_H_ */
