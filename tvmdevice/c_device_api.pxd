# Cython view of tvmdevice/c_device_api.h, for plugins: ``from tvmdevice.c_device_api cimport ...``
from libc.stdint cimport int32_t, uint8_t, uint16_t

cdef extern from "tvmdevice/c_device_api.h" nogil:
    enum: TVMD_DEVICE_API_VERSION
    ctypedef enum tvmd_status_t:
        TVMD_OK
        TVMD_ERR_GENERIC
        TVMD_ERR_INVALID_STATE
        TVMD_ERR_OUT_OF_MEMORY
        TVMD_ERR_INVALID_ARGUMENT
        TVMD_ERR_NOT_SUPPORTED
        TVMD_ERR_ABI_MISMATCH
        TVMD_ERR_KERNEL
        TVMD_ERR_PLUGIN
    ctypedef struct tvmd_dtype_t:
        uint8_t code
        uint8_t bits
        uint16_t lanes
    ctypedef void* tvmd_stream_t
