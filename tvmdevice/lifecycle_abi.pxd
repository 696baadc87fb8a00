# Cython view of tvmdevice/lifecycle_abi.h: ``from tvmdevice.lifecycle_abi cimport tvmd_lifecycle_t``
from libc.stdint cimport int32_t, uint32_t

cdef extern from "tvmdevice/lifecycle_abi.h" nogil:
    enum: TVMD_LIFECYCLE_ABI_VERSION
    const char* TVMD_LIFECYCLE_CAPSULE
    ctypedef int32_t (*tvmd_lifecycle_fn)(void* device)
    ctypedef struct tvmd_lifecycle_t:
        uint32_t abi_version
        uint32_t struct_size
        tvmd_lifecycle_fn init
        tvmd_lifecycle_fn open
        tvmd_lifecycle_fn activate
        tvmd_lifecycle_fn deactivate
        tvmd_lifecycle_fn close
        tvmd_lifecycle_fn destroy
