# cython: language_level=3, boundscheck=False, wraparound=False
"""The ethos-u C code for Python: the lifecycle table, as a ``"tvmdevice.lifecycle"`` capsule.

Tests call the lifecycle functions directly (by the struct's address) to see
what the device itself enforces, without the framework's checks in front.
"""
from libc.stdint cimport int16_t, int32_t, uint8_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport calloc, free

from tvmdevice cimport capsules
from tvmdevice.kernel_abi cimport tvmd_kernel_t
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
        const char* field

    enum:
        ETHOSU_STREAM_OK
        ETHOSU_STREAM_MALFORMED
        ETHOSU_STREAM_UNSUPPORTED


cdef extern from "ethosu_npu.h" nogil:
    enum:
        ETHOSU_REGIONS

    ctypedef struct ethosu_npu_t:
        uint8_t* region[8]
        uint64_t region_size[8]
        uint32_t read_only_regions
        int16_t* weights
        uint32_t weights_capacity
        uint32_t weight_slots_needed
        uint64_t commands
        uint64_t operations
        uint64_t macs
        uint64_t dma_bytes

    int32_t ethosu_stream_run(const uint8_t* payload, uint32_t size, ethosu_npu_t* npu, int execute,
                              ethosu_stream_report_t* report)
    uint64_t ethosu_work_bytes(uint32_t weight_slots)


cdef extern from "ethosu_kernels.h" nogil:
    const tvmd_kernel_t tvmd_ethosu_partition_kernel

STREAM_OK = ETHOSU_STREAM_OK
STREAM_MALFORMED = ETHOSU_STREAM_MALFORMED
STREAM_UNSUPPORTED = ETHOSU_STREAM_UNSUPPORTED
#: The ``"tvmdevice.kernel"`` capsule of the partition kernel (csrc/ethosu_kernel.c).
PARTITION_KERNEL = capsules.kernel_capsule(&tvmd_ethosu_partition_kernel)


def work_bytes(uint32_t weight_slots):
    """Bytes of working memory the functional model needs for ``weight_slots`` decoded weights."""
    return ethosu_work_bytes(weight_slots)


def stream_check(const uint8_t[::1] payload, region_sizes=()):
    """Check a Vela driver payload against the functional model, with these regions' sizes (bytes);
    region 0 is read-only (Vela's weights and bias/scale records).

    :returns: ``(code, word, ctrl, opcode, commands, field, weight_slots)``: ``ctrl`` is 0xFFFFFFFF
        when the offending word is a driver action (``opcode`` is the action); ``field`` names the
        register field an operation uses that the model does not implement (None otherwise);
        ``weight_slots`` is the working memory the stream's operations need, in decoded weights.
    """
    cdef ethosu_stream_report_t report
    cdef ethosu_npu_t* npu
    cdef int32_t code
    cdef uint8_t empty = 0
    if payload.shape[0] > 0xFFFFFFFF:
        raise ValueError("a command stream over 4 GiB")
    if len(region_sizes) > ETHOSU_REGIONS:
        raise ValueError(f"at most {ETHOSU_REGIONS} regions")
    npu = <ethosu_npu_t*>calloc(1, sizeof(ethosu_npu_t))
    if npu == NULL:
        raise MemoryError()
    try:
        for i, size in enumerate(region_sizes):
            npu.region_size[i] = size
        npu.read_only_regions = 1  # region 0: Vela's read-only data (weights, bias/scale records)
        code = ethosu_stream_run(&payload[0] if payload.shape[0] else &empty, <uint32_t>payload.shape[0], npu, 0,
                                 &report)
        field = report.field.decode("ascii") if report.field != NULL else None
        return code, report.word, report.ctrl, report.opcode, report.commands, field, npu.weight_slots_needed
    finally:
        free(npu)


def stream_run(const uint8_t[::1] payload, regions):
    """Execute a Vela driver payload on the functional model with ``regions`` (uint8 arrays; region 0
    is read-only: no operation writes it).

    :returns: ``(code, field, commands, operations, macs, dma_bytes)``.
    """
    cdef ethosu_stream_report_t report
    cdef ethosu_npu_t* npu
    cdef uint8_t[::1] region
    cdef int16_t[::1] weights
    cdef int32_t code
    import numpy as np

    if len(regions) > ETHOSU_REGIONS:
        raise ValueError(f"at most {ETHOSU_REGIONS} regions")
    slots = stream_check(payload, [len(r) for r in regions])[6]
    weights = np.zeros(max(int(slots), 1), np.int16)
    npu = <ethosu_npu_t*>calloc(1, sizeof(ethosu_npu_t))
    if npu == NULL:
        raise MemoryError()
    try:
        for i, r in enumerate(regions):
            region = r
            npu.region[i] = &region[0] if region.shape[0] else NULL
            npu.region_size[i] = region.shape[0]
        npu.read_only_regions = 1
        npu.weights = &weights[0]
        npu.weights_capacity = <uint32_t>weights.shape[0]
        code = ethosu_stream_run(&payload[0], <uint32_t>payload.shape[0], npu, 1, &report)
        field = report.field.decode("ascii") if report.field != NULL else None
        return code, field, npu.commands, npu.operations, npu.macs, npu.dma_bytes
    finally:
        free(npu)


# ------------------------------------------------------------------ weights
cdef extern from "ethosu_weights.h" nogil:
    int32_t ethosu_mlw_decode(const uint8_t* stream, uint32_t size, int16_t* out, uint32_t capacity)
    int32_t ethosu_mlw_decode_window(const uint8_t* stream, uint32_t size, uint32_t skip, int16_t* out,
                                     uint32_t capacity)


def mlw_decode(const uint8_t[::1] stream, int16_t[::1] out):
    """Decode a Vela weight stream into ``out``: the number of weights, -1 (malformed), -2 (``out`` too small)."""
    cdef uint8_t empty = 0
    cdef int16_t none = 0
    if stream.shape[0] > 0xFFFFFFFF or out.shape[0] > 0xFFFFFFFF:
        raise ValueError("a weight stream or buffer over 4 GiB")
    return ethosu_mlw_decode(&stream[0] if stream.shape[0] else &empty, <uint32_t>stream.shape[0],
                             &out[0] if out.shape[0] else &none, <uint32_t>out.shape[0])


def mlw_decode_window(const uint8_t[::1] stream, uint32_t skip, int16_t[::1] out):
    """Decode the weights numbered ``skip`` .. ``skip + len(out)`` of a Vela weight stream into ``out``:
    ``skip`` plus the number written, or -1 (malformed)."""
    cdef uint8_t empty = 0
    cdef int16_t none = 0
    if stream.shape[0] > 0xFFFFFFFF or out.shape[0] > 0xFFFFFFFF:
        raise ValueError("a weight stream or buffer over 4 GiB")
    return ethosu_mlw_decode_window(&stream[0] if stream.shape[0] else &empty, <uint32_t>stream.shape[0], skip,
                                    &out[0] if out.shape[0] else &none, <uint32_t>out.shape[0])


# ------------------------------------------------------------------ the host's weight cache
cdef extern from "ethosu_weight_cache.h" nogil:
    uint32_t ethosu_weight_cache_entries()
    int ethosu_weight_cache_on()
    void ethosu_weight_cache_set(int on)


def weight_cache(on=None):
    """Whether the calling thread's functional model keeps decoded weights (the default); ``on=False``
    makes it decode each OFM block's weights when it runs, as an exported model does."""
    if on is not None:
        ethosu_weight_cache_set(1 if on else 0)
    return bool(ethosu_weight_cache_on())


def weight_cache_entries():
    """The weight streams the host's functional model has decoded and keeps, on the calling thread."""
    return ethosu_weight_cache_entries()
