/*
 * The plugin's kernel table: every woofles kernel, named once.  The Python
 * binding publishes these entries as "tvmdevice.kernel" capsules by name; a
 * firmware build calls the functions directly and may leave this file out.
 */
#include "woofles_kernels.h"

/* The name is the function's own identifier, so the two cannot drift apart. */
#define WOOFLES_KERNEL(fn) TVMD_KERNEL_INIT(#fn, fn)

const tvmd_kernel_t tvmd_woofles_kernels[] = {
    WOOFLES_KERNEL(tvmd_woofles_conv2d_s8),
    WOOFLES_KERNEL(tvmd_woofles_depthwise_conv2d_s8),
    WOOFLES_KERNEL(tvmd_woofles_fully_connected_s8),
    WOOFLES_KERNEL(tvmd_woofles_avg_pool2d_s8),
    WOOFLES_KERNEL(tvmd_woofles_max_pool2d_s8),
    WOOFLES_KERNEL(tvmd_woofles_add_s8),
    WOOFLES_KERNEL(tvmd_woofles_maximum_s8),
    WOOFLES_KERNEL(tvmd_woofles_minimum_s8),
    WOOFLES_KERNEL(tvmd_woofles_transpose_conv_s8),
    WOOFLES_KERNEL(tvmd_woofles_pad_s8),
    WOOFLES_KERNEL(tvmd_woofles_conv2d_s16),
    WOOFLES_KERNEL(tvmd_woofles_depthwise_conv2d_s16),
    WOOFLES_KERNEL(tvmd_woofles_fully_connected_s16),
    WOOFLES_KERNEL(tvmd_woofles_avg_pool2d_s16),
    WOOFLES_KERNEL(tvmd_woofles_max_pool2d_s16),
    WOOFLES_KERNEL(tvmd_woofles_add_s16),
    WOOFLES_KERNEL(tvmd_woofles_pad_s16),
};

const uint32_t tvmd_woofles_num_kernels =
    (uint32_t)(sizeof(tvmd_woofles_kernels) / sizeof(tvmd_woofles_kernels[0]));
