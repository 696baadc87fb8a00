# Declarations of _woofles.pyx: the Cython view of csrc/woofles.h and
# csrc/woofles_kernels.h (and the generated tvm_device_woofles.h they include).
# Only the members Cython touches are declared; the layout itself comes from
# the C header.
from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t

from tvmdevice.kernel_abi cimport tvmd_kernel_t


cdef extern from "woofles.h" nogil:
    ctypedef struct tvmd_woofles_stream_t:
        uint32_t in_use
        uint32_t count
        uint64_t enqueued
        uint64_t completed

    ctypedef struct tvm_device_woofles_t:
        uint32_t magic
        uint32_t power_state
        uint32_t num_blocks
        uint64_t sram_size
        uint64_t sram_base
        uint8_t* sram_host
        tvmd_woofles_stream_t streams[1]

    enum:
        WOOFLES_MAGIC
        WOOFLES_POWER_OFF
        WOOFLES_POWER_SLEEP
        WOOFLES_POWER_ACTIVE
        WOOFLES_DMA_SRC_HOST
        WOOFLES_DMA_DST_HOST
        WOOFLES_DMA_WAIT
        WOOFLES_DMA_SETUP_CYCLES
        WOOFLES_WAKE_CYCLES
        WOOFLES_TILE_OVERHEAD
        WOOFLES_LAUNCH_CYCLES
        WOOFLES_MAX_MAC_WIDTH

    int32_t TVMDeviceWooflesInit(tvm_device_woofles_t* device)
    int32_t TVMDeviceWooflesOpen(tvm_device_woofles_t* device)
    int32_t TVMDeviceWooflesActivate(tvm_device_woofles_t* device)
    int32_t TVMDeviceWooflesDeactivate(tvm_device_woofles_t* device)
    int32_t TVMDeviceWooflesClose(tvm_device_woofles_t* device)
    int32_t TVMDeviceWooflesDestroy(tvm_device_woofles_t* device)

    int32_t tvmd_woofles_alloc(tvm_device_woofles_t* dev, uint64_t nbytes, uint64_t alignment, uint64_t* out_addr)
    int32_t tvmd_woofles_free(tvm_device_woofles_t* dev, uint64_t addr)
    void tvmd_woofles_alloc_stats(const tvm_device_woofles_t* dev, uint64_t* free_bytes, uint64_t* largest_free)

    int32_t tvmd_woofles_stream_create(tvm_device_woofles_t* dev, uint32_t* out_slot)
    int32_t tvmd_woofles_stream_free(tvm_device_woofles_t* dev, uint32_t slot)
    int32_t tvmd_woofles_dma_enqueue(tvm_device_woofles_t* dev, uint32_t slot, uint64_t src, uint64_t dst,
                                     uint64_t nbytes, uint32_t flags, uint64_t* out_seq)
    int32_t tvmd_woofles_dma_wait_stream(tvm_device_woofles_t* dev, uint32_t src_slot, uint32_t dst_slot)
    int32_t tvmd_woofles_stream_sync(tvm_device_woofles_t* dev, uint32_t slot)
    int32_t tvmd_woofles_dma_drain(tvm_device_woofles_t* dev)


cdef extern from "woofles_kernels.h" nogil:
    ctypedef struct tvmd_woofles_conv_params_t:
        int32_t batches, in_h, in_w, in_ch
        int32_t out_h, out_w, out_ch
        int32_t filter_h, filter_w
        int32_t filter_in_ch
        int32_t depth_multiplier
        int32_t stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w
        int32_t input_offset, output_offset
        int32_t act_min, act_max
        int32_t num_inputs
        const int32_t* multiplier
        const int32_t* shift

    ctypedef struct tvmd_woofles_fc_params_t:
        int32_t batches, accum_depth, out_ch
        int32_t input_offset, filter_offset, output_offset
        int32_t act_min, act_max
        int32_t num_inputs
        const int32_t* multiplier
        const int32_t* shift

    ctypedef struct tvmd_woofles_pool_params_t:
        int32_t batches, in_h, in_w, channels, out_h, out_w
        int32_t filter_h, filter_w, stride_h, stride_w, pad_h, pad_w
        int32_t act_min, act_max

    ctypedef struct tvmd_woofles_add_params_t:
        int32_t out_shape[4]
        int32_t in1_strides[4]
        int32_t in2_strides[4]
        int32_t in1_size, in2_size
        int32_t input1_offset, input2_offset, output_offset
        int32_t left_shift
        int32_t input1_multiplier, input1_shift
        int32_t input2_multiplier, input2_shift
        int32_t output_multiplier, output_shift
        int32_t act_min, act_max

    const tvmd_kernel_t tvmd_woofles_kernels[]
    const uint32_t tvmd_woofles_num_kernels
