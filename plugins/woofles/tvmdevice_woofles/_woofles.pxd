# Declarations of _woofles.pyx: the Cython view of csrc/woofles.h and
# csrc/woofles_kernels.h (and the generated tvm_device_woofles.h they include).
# Only the members Cython touches are declared; the layout itself comes from
# the C header.  The kernels' params structs are not declared here: Python
# fills them through their Layouts (tvmdevice_woofles/params.py).
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
        uint64_t ns_in_state[3]
        uint64_t state_since_ns

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

    ctypedef struct tvmd_woofles_config_t:
        uint8_t* sram_host
        uint64_t sram_base
        uint64_t sram_size
        uint32_t mac_width
        uint32_t dma_bytes_per_cycle
        uint32_t clock_mhz

    int32_t TVMDeviceWooflesConfigure(tvm_device_woofles_t* dev, const tvmd_woofles_config_t* config)
    int32_t TVMDeviceWooflesAllocDataSpace(tvm_device_woofles_t* dev, uint64_t nbytes, uint64_t alignment,
                                           uint64_t* out_addr)
    int32_t TVMDeviceWooflesFreeDataSpace(tvm_device_woofles_t* dev, uint64_t addr)
    int32_t TVMDeviceWooflesCopyToDevice(tvm_device_woofles_t* dev, uint64_t dst, const void* src, uint64_t nbytes)
    int32_t TVMDeviceWooflesCopyFromDevice(tvm_device_woofles_t* dev, void* dst, uint64_t src, uint64_t nbytes)
    void tvmd_woofles_alloc_stats(const tvm_device_woofles_t* dev, uint64_t* free_bytes, uint64_t* largest_free)

    int32_t tvmd_woofles_stream_create(tvm_device_woofles_t* dev, uint32_t* out_slot)
    int32_t tvmd_woofles_stream_free(tvm_device_woofles_t* dev, uint32_t slot)
    int32_t tvmd_woofles_dma_enqueue(tvm_device_woofles_t* dev, uint32_t slot, uint64_t src, uint64_t dst,
                                     uint64_t nbytes, uint32_t flags, uint64_t* out_seq)
    int32_t tvmd_woofles_dma_wait_stream(tvm_device_woofles_t* dev, uint32_t src_slot, uint32_t dst_slot)
    int32_t tvmd_woofles_stream_sync(tvm_device_woofles_t* dev, uint32_t slot)
    int32_t tvmd_woofles_dma_drain(tvm_device_woofles_t* dev)


cdef extern from "woofles_kernels.h" nogil:
    const tvmd_kernel_t tvmd_woofles_copy_kernels[]
    const tvmd_kernel_t tvmd_woofles_kernels[]
    const uint32_t tvmd_woofles_num_kernels
