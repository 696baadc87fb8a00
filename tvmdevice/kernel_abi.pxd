# Cython view of tvmdevice/kernel_abi.h: ``from tvmdevice.kernel_abi cimport tvmd_kernel_t``
from libc.stdint cimport int32_t, uint32_t

cdef extern from "tvmdevice/kernel_abi.h" nogil:
    enum: TVMD_KERNEL_ABI_VERSION
    const char* TVMD_KERNEL_CAPSULE
    const char* TVMD_PARAMS_CAPSULE
    ctypedef int32_t (*tvmd_kernel_fn)(const void* params, void* const* buffers,
                                       void* resource_handle)
    ctypedef struct tvmd_kernel_t:
        uint32_t abi_version
        uint32_t struct_size
        const char* name
        tvmd_kernel_fn fn
