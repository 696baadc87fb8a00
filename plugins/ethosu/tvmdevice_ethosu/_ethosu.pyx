# cython: language_level=3, boundscheck=False, wraparound=False
"""The ethos-u C code for Python: the lifecycle table, as a ``"tvmdevice.lifecycle"`` capsule.

Tests call the lifecycle functions directly (by the struct's address) to see
what the device itself enforces, without the framework's checks in front.
"""
from libc.stdint cimport int16_t, int32_t, uint8_t, uint32_t, uintptr_t

from tvmdevice cimport capsules
from tvmdevice.lifecycle_abi cimport tvmd_lifecycle_t


cdef extern from "ethosu.h" nogil:
    ctypedef struct tvm_device_ethos_u_t:
        pass

    enum:
        ETHOSU_MAGIC

    const tvmd_lifecycle_t tvmd_ethosu_lifecycle
    int32_t TVMDeviceEthosUInit(tvm_device_ethos_u_t* device)
    int32_t TVMDeviceEthosUOpen(tvm_device_ethos_u_t* device)
    int32_t TVMDeviceEthosUActivate(tvm_device_ethos_u_t* device)
    int32_t TVMDeviceEthosUDeactivate(tvm_device_ethos_u_t* device)
    int32_t TVMDeviceEthosUClose(tvm_device_ethos_u_t* device)
    int32_t TVMDeviceEthosUDestroy(tvm_device_ethos_u_t* device)

MAGIC = ETHOSU_MAGIC
#: sizeof(tvm_device_ethos_u_t) as the C compiler laid it out.
STRUCT_SIZE = sizeof(tvm_device_ethos_u_t)
#: The six lifecycle functions, all C.
LIFECYCLE = capsules.lifecycle_capsule(&tvmd_ethosu_lifecycle)


cdef tvm_device_ethos_u_t* _dev(uintptr_t handle) except NULL:
    if handle == 0:
        raise ValueError("NULL ethos-u device handle")
    return <tvm_device_ethos_u_t*>handle


def init(uintptr_t handle):
    """TVMDeviceEthosUInit: status."""
    return TVMDeviceEthosUInit(_dev(handle))


def open(uintptr_t handle):
    """TVMDeviceEthosUOpen: status."""
    return TVMDeviceEthosUOpen(_dev(handle))


def activate(uintptr_t handle):
    """TVMDeviceEthosUActivate: status."""
    return TVMDeviceEthosUActivate(_dev(handle))


def deactivate(uintptr_t handle):
    """TVMDeviceEthosUDeactivate: status."""
    return TVMDeviceEthosUDeactivate(_dev(handle))


def close(uintptr_t handle):
    """TVMDeviceEthosUClose: status."""
    return TVMDeviceEthosUClose(_dev(handle))


def destroy(uintptr_t handle):
    """TVMDeviceEthosUDestroy: status."""
    return TVMDeviceEthosUDestroy(_dev(handle))


# ---------------------------------------------------------- command streams
cdef extern from "ethosu_stream.h" nogil:
    ctypedef struct ethosu_stream_report_t:
        uint32_t word
        uint32_t ctrl
        uint32_t opcode
        uint32_t commands

    enum:
        ETHOSU_STREAM_OK
        ETHOSU_STREAM_MALFORMED
        ETHOSU_STREAM_UNSUPPORTED

    int32_t ethosu_stream_check(const uint8_t* payload, uint32_t size, ethosu_stream_report_t* report)

STREAM_OK = ETHOSU_STREAM_OK
STREAM_MALFORMED = ETHOSU_STREAM_MALFORMED
STREAM_UNSUPPORTED = ETHOSU_STREAM_UNSUPPORTED


def stream_check(const uint8_t[::1] payload):
    """Check a Vela driver payload against the functional model: ``(code, word, ctrl, opcode, commands)``.

    ``ctrl`` is 0xFFFFFFFF when the offending word is a driver action (``opcode`` is the action).
    """
    cdef ethosu_stream_report_t report
    cdef int32_t code
    if payload.shape[0] > 0xFFFFFFFF:
        raise ValueError("a command stream over 4 GiB")
    code = ethosu_stream_check(&payload[0] if payload.shape[0] else NULL, <uint32_t>payload.shape[0], &report)
    return code, report.word, report.ctrl, report.opcode, report.commands


# ------------------------------------------------------------------ weights
cdef extern from "ethosu_weights.h" nogil:
    enum:
        ETHOSU_MLW_WORKSPACE

    int32_t ethosu_mlw_decode(const uint8_t* stream, uint32_t size, int16_t* out, uint32_t capacity,
                              int32_t* work)


def mlw_decode(const uint8_t[::1] stream, int16_t[::1] out):
    """Decode a Vela weight stream into ``out``: the number of weights, -1 (malformed), -2 (``out`` too small)."""
    import numpy as np

    cdef int32_t[::1] work = np.empty(ETHOSU_MLW_WORKSPACE, dtype=np.int32)
    cdef uint8_t empty = 0
    cdef int16_t none = 0
    if stream.shape[0] > 0xFFFFFFFF or out.shape[0] > 0xFFFFFFFF:
        raise ValueError("a weight stream or buffer over 4 GiB")
    return ethosu_mlw_decode(&stream[0] if stream.shape[0] else &empty, <uint32_t>stream.shape[0],
                             &out[0] if out.shape[0] else &none, <uint32_t>out.shape[0], &work[0])
