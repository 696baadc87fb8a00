/*
 * cmsis-nn device kernels: flat parameter structs and entry points.
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

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this device's struct and kernel contract; the api_version
 * member of tvm_device_cmsis_nn_t (tvmdevice_cmsis.device.API_VERSION). */
#define TVMD_CMSIS_API_VERSION 1u

/* Kernel families; also the index into tvm_device_cmsis_nn_t.call_counts
 * (tvmdevice_cmsis.device.KERNEL_KINDS has the same order). */
typedef enum {
  TVMD_CMSIS_KIND_CONV = 0,
  TVMD_CMSIS_KIND_DEPTHWISE_CONV = 1,
  TVMD_CMSIS_KIND_FULLY_CONNECTED = 2,
  TVMD_CMSIS_KIND_AVG_POOL = 3,
  TVMD_CMSIS_KIND_MAX_POOL = 4,
  TVMD_CMSIS_KIND_SOFTMAX = 5,
  TVMD_CMSIS_KIND_ADD = 6,
  TVMD_CMSIS_KIND_MUL = 7,
  TVMD_CMSIS_NUM_KINDS = 8
} tvmd_cmsis_kind_t;

/* Output pixels the convolution GEMM processes per block (im2col rows). */
#define TVMD_CMSIS_CONV_ROWS 4
/* Highest tensor rank of ADD/MUL broadcasting (TFLM's BroadcastAdd6DSlow). */
#define TVMD_CMSIS_MAX_DIMS 6

/* Quantities every kernel family shares. */
typedef struct {
  int32_t input_offset;  /* -input zero point */
  int32_t output_offset; /* output zero point */
  int32_t act_min;       /* fused activation clamp, int8 range */
  int32_t act_max;
} tvmd_cmsis_quant_t;

/* CONV_2D, NHWC input, OHWI filter (grouped when filter_in_ch < in_ch). */
typedef struct {
  uint32_t kind; /* TVMD_CMSIS_KIND_CONV */
  int32_t num_inputs; /* 2 (no bias slot) or 3 (bias slot, NULL when absent) */
  int32_t batches, in_h, in_w, in_ch;
  int32_t out_h, out_w, out_ch;
  int32_t filter_h, filter_w, filter_in_ch, groups;
  int32_t stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w;
  int32_t k;       /* filter_h * filter_w * filter_in_ch */
  int32_t k_pairs; /* (k + 1) / 2: im2col rows hold 2 * k_pairs values */
  int32_t ldw;     /* out_ch / groups rounded up to TVMD_CMSIS_GEMM_COLS */
  tvmd_cmsis_quant_t q;
  uint64_t macs;
  const int16_t* weights;    /* [groups][k_pairs][ldw][2]: pair-interleaved, zero padded */
  const int32_t* multiplier; /* [out_ch] */
  const int32_t* shift;      /* [out_ch] */
} tvmd_cmsis_conv_params_t;

/* DEPTHWISE_CONV_2D, NHWC input, [1, KH, KW, in_ch * depth_multiplier] filter. */
typedef struct {
  uint32_t kind; /* TVMD_CMSIS_KIND_DEPTHWISE_CONV */
  int32_t num_inputs; /* 2 (no bias slot) or 3 (bias slot, NULL when absent) */
  int32_t batches, in_h, in_w, in_ch;
  int32_t out_h, out_w, out_ch, depth_multiplier;
  int32_t filter_h, filter_w;
  int32_t stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w;
  int32_t cp; /* out_ch rounded up to TVMD_CMSIS_NB */
  tvmd_cmsis_quant_t q;
  uint64_t macs;
  const float* weights;      /* [filter_h * filter_w][cp], zero padded (exact integers) */
  const int32_t* multiplier; /* [out_ch] */
  const int32_t* shift;      /* [out_ch] */
} tvmd_cmsis_depthwise_conv_params_t;

/* FULLY_CONNECTED, [batches, accum_depth] x [out_ch, accum_depth]^T. */
typedef struct {
  uint32_t kind; /* TVMD_CMSIS_KIND_FULLY_CONNECTED */
  int32_t num_inputs; /* 2 (no bias slot) or 3 (bias slot, NULL when absent) */
  int32_t batches, accum_depth, out_ch;
  int32_t k_pairs; /* (accum_depth + 1) / 2 */
  int32_t ldw;     /* out_ch rounded up to TVMD_CMSIS_GEMM_COLS */
  tvmd_cmsis_quant_t q;
  uint64_t macs;
  const int16_t* weights;    /* [k_pairs][ldw][2]: weight + weights offset, pair-interleaved, zero padded */
  const int32_t* multiplier; /* [out_ch]; equal entries when per-tensor */
  const int32_t* shift;      /* [out_ch] */
} tvmd_cmsis_fully_connected_params_t;

/* AVERAGE_POOL_2D and MAX_POOL_2D (kind tells which). */
typedef struct {
  uint32_t kind; /* TVMD_CMSIS_KIND_AVG_POOL or TVMD_CMSIS_KIND_MAX_POOL */
  int32_t batches, in_h, in_w, channels;
  int32_t out_h, out_w;
  int32_t filter_h, filter_w, stride_h, stride_w, pad_h, pad_w;
  int32_t act_min, act_max;
} tvmd_cmsis_pool_params_t;

/* SOFTMAX int8 -> int8 along the last axis (TFLM's gemmlowp path). */
typedef struct {
  uint32_t kind; /* TVMD_CMSIS_KIND_SOFTMAX */
  int32_t rows, depth;
  int32_t input_multiplier;
  int32_t input_left_shift;
  int32_t diff_min;
} tvmd_cmsis_softmax_params_t;

/* ADD and MUL with broadcasting; shapes right-aligned to ndim dimensions,
 * strides in elements, 0 along a broadcast dimension. */
typedef struct {
  uint32_t kind; /* TVMD_CMSIS_KIND_ADD or TVMD_CMSIS_KIND_MUL */
  int32_t ndim;
  int32_t size; /* output elements */
  int32_t out_shape[TVMD_CMSIS_MAX_DIMS];
  int32_t in1_strides[TVMD_CMSIS_MAX_DIMS];
  int32_t in2_strides[TVMD_CMSIS_MAX_DIMS];
  int32_t input1_offset, input2_offset, output_offset;
  int32_t left_shift; /* ADD: 20 for int8 */
  int32_t input1_multiplier, input1_shift;
  int32_t input2_multiplier, input2_shift;
  int32_t output_multiplier, output_shift;
  int32_t act_min, act_max;
} tvmd_cmsis_elementwise_params_t;

int32_t tvmd_cmsis_conv_s8(const void* params, void* const* buffers, void* resource_handle);
size_t tvmd_cmsis_conv_s8_get_buffer_size(const tvmd_cmsis_conv_params_t* params);

int32_t tvmd_cmsis_depthwise_conv_s8(const void* params, void* const* buffers, void* resource_handle);
size_t tvmd_cmsis_depthwise_conv_s8_get_buffer_size(const tvmd_cmsis_depthwise_conv_params_t* params);

int32_t tvmd_cmsis_fully_connected_s8(const void* params, void* const* buffers, void* resource_handle);
size_t tvmd_cmsis_fully_connected_s8_get_buffer_size(const tvmd_cmsis_fully_connected_params_t* params);

int32_t tvmd_cmsis_avg_pool_s8(const void* params, void* const* buffers, void* resource_handle);
size_t tvmd_cmsis_avg_pool_s8_get_buffer_size(const tvmd_cmsis_pool_params_t* params);

int32_t tvmd_cmsis_max_pool_s8(const void* params, void* const* buffers, void* resource_handle);
size_t tvmd_cmsis_max_pool_s8_get_buffer_size(const tvmd_cmsis_pool_params_t* params);

int32_t tvmd_cmsis_softmax_s8(const void* params, void* const* buffers, void* resource_handle);
size_t tvmd_cmsis_softmax_s8_get_buffer_size(const tvmd_cmsis_softmax_params_t* params);

int32_t tvmd_cmsis_add_s8(const void* params, void* const* buffers, void* resource_handle);
size_t tvmd_cmsis_add_s8_get_buffer_size(const tvmd_cmsis_elementwise_params_t* params);

int32_t tvmd_cmsis_mul_s8(const void* params, void* const* buffers, void* resource_handle);
size_t tvmd_cmsis_mul_s8_get_buffer_size(const tvmd_cmsis_elementwise_params_t* params);

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

#ifdef __cplusplus
}
#endif
#endif /* TVMD_CMSIS_NN_H_ */
