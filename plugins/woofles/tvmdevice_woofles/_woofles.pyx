# cython: language_level=3, boundscheck=False, wraparound=False
"""The woofles C code for Python: lifecycle, allocator, DMA engine and kernels, in one extension.

Device entry points are thin wrappers: each takes the device struct's address
(``device.handle_address``) and returns the C status code (plus any
out-value), leaving error reporting to ``plugin.py``, which has the context
for a good message.  Tests call them directly to see what the device itself
enforces, without the framework's checks in front.

Kernels are published from the C kernel table (``tvmd_woofles_kernels``,
``csrc/woofles_kernel_table.c``) as ``"tvmdevice.kernel"`` capsules, by name;
their params structs are filled in Python (:mod:`tvmdevice_woofles.params`).
The declarations of the C side are in ``_woofles.pxd``.
"""
from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t, uintptr_t
from libc.string cimport memcpy, memset
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from tvmdevice cimport capsules
from tvmdevice.lifecycle_abi cimport TVMD_LIFECYCLE_ABI_VERSION, tvmd_lifecycle_t

MAGIC = WOOFLES_MAGIC
POWER_OFF = WOOFLES_POWER_OFF
POWER_SLEEP = WOOFLES_POWER_SLEEP
POWER_ACTIVE = WOOFLES_POWER_ACTIVE
DMA_SRC_HOST = WOOFLES_DMA_SRC_HOST
DMA_DST_HOST = WOOFLES_DMA_DST_HOST
DMA_WAIT = WOOFLES_DMA_WAIT
DMA_SETUP_CYCLES = WOOFLES_DMA_SETUP_CYCLES
WAKE_CYCLES = WOOFLES_WAKE_CYCLES
TILE_OVERHEAD = WOOFLES_TILE_OVERHEAD
LAUNCH_CYCLES = WOOFLES_LAUNCH_CYCLES
MAX_MAC_WIDTH = WOOFLES_MAX_MAC_WIDTH
#: sizeof(tvm_device_woofles_t) as the C compiler laid it out.
STRUCT_SIZE = sizeof(tvm_device_woofles_t)
STREAM_STRUCT_SIZE = sizeof(tvmd_woofles_stream_t)


cdef tvm_device_woofles_t* _dev(uintptr_t handle) except NULL:
    if handle == 0:
        raise ValueError("NULL woofles device handle")
    return <tvm_device_woofles_t*>handle


def init(uintptr_t handle):
    """TVMDeviceWooflesInit; :func:`configure` comes next."""
    return TVMDeviceWooflesInit(_dev(handle))


def configure(uintptr_t handle, uintptr_t sram_host, uint64_t sram_base, uint64_t sram_size, uint32_t mac_width,
              uint32_t dma_bytes_per_cycle, uint32_t clock_mhz):
    """TVMDeviceWooflesConfigure with a ``tvmd_woofles_config_t`` of these members: status.

    ``sram_host`` 0 leaves the backing memory to be handed over before Open.
    """
    cdef tvmd_woofles_config_t config
    memset(&config, 0, sizeof(config))
    config.sram_host = <uint8_t*>sram_host
    config.sram_base = sram_base
    config.sram_size = sram_size
    config.mac_width = mac_width
    config.dma_bytes_per_cycle = dma_bytes_per_cycle
    config.clock_mhz = clock_mhz
    return TVMDeviceWooflesConfigure(_dev(handle), &config)


def open(uintptr_t handle):
    """TVMDeviceWooflesOpen; ``sram_host`` must point at the backing memory."""
    return TVMDeviceWooflesOpen(_dev(handle))


def activate(uintptr_t handle):
    """TVMDeviceWooflesActivate."""
    return TVMDeviceWooflesActivate(_dev(handle))


def deactivate(uintptr_t handle):
    """TVMDeviceWooflesDeactivate."""
    return TVMDeviceWooflesDeactivate(_dev(handle))


def close(uintptr_t handle):
    """TVMDeviceWooflesClose: drains DMA, frees all SRAM, powers it off."""
    return TVMDeviceWooflesClose(_dev(handle))


def destroy(uintptr_t handle):
    """TVMDeviceWooflesDestroy."""
    return TVMDeviceWooflesDestroy(_dev(handle))


def alloc(uintptr_t handle, uint64_t nbytes, uint64_t alignment):
    """TVMDeviceWooflesAllocDataSpace (first fit): ``(status, device_address)``."""
    cdef uint64_t addr = 0
    cdef int status = TVMDeviceWooflesAllocDataSpace(_dev(handle), nbytes, alignment, &addr)
    return status, addr


def free(uintptr_t handle, uint64_t addr):
    """TVMDeviceWooflesFreeDataSpace: free the block starting at ``addr``: status."""
    return TVMDeviceWooflesFreeDataSpace(_dev(handle), addr)


def copy_to_device(uintptr_t handle, uint64_t dst, const uint8_t[::1] src):
    """TVMDeviceWooflesCopyToDevice of all of ``src`` (synchronous): status."""
    if src.shape[0] == 0:
        return TVMDeviceWooflesCopyToDevice(_dev(handle), dst, NULL, 0)
    return TVMDeviceWooflesCopyToDevice(_dev(handle), dst, &src[0], <uint64_t>src.shape[0])


def copy_from_device(uintptr_t handle, uint8_t[::1] dst, uint64_t src):
    """TVMDeviceWooflesCopyFromDevice filling all of ``dst`` (synchronous): status."""
    if dst.shape[0] == 0:
        return TVMDeviceWooflesCopyFromDevice(_dev(handle), NULL, src, 0)
    return TVMDeviceWooflesCopyFromDevice(_dev(handle), &dst[0], src, <uint64_t>dst.shape[0])


def alloc_stats(uintptr_t handle):
    """``(free_bytes, largest_free_block)`` of the SRAM."""
    cdef uint64_t free_bytes = 0, largest = 0
    tvmd_woofles_alloc_stats(_dev(handle), &free_bytes, &largest)
    return free_bytes, largest


def stream_create(uintptr_t handle):
    """``(status, slot)``: a free stream slot (slot number == stream handle)."""
    cdef uint32_t slot = 0
    cdef int status = tvmd_woofles_stream_create(_dev(handle), &slot)
    return status, slot


def stream_free(uintptr_t handle, uint32_t slot):
    """Finish a stream's work and release its slot: status."""
    return tvmd_woofles_stream_free(_dev(handle), slot)


def dma_enqueue(uintptr_t handle, uint32_t slot, uint64_t src, uint64_t dst, uint64_t nbytes, uint32_t flags):
    """Queue one transfer on a stream: ``(status, sequence_number)``."""
    cdef uint64_t seq = 0
    cdef int status = tvmd_woofles_dma_enqueue(_dev(handle), slot, src, dst, nbytes, flags, &seq)
    return status, seq


def dma_wait_stream(uintptr_t handle, uint32_t src_slot, uint32_t dst_slot):
    """Order later work on ``dst_slot`` after what ``src_slot`` has queued: status."""
    return tvmd_woofles_dma_wait_stream(_dev(handle), src_slot, dst_slot)


def stream_sync(uintptr_t handle, uint32_t slot):
    """Retire everything queued on a stream: status."""
    return tvmd_woofles_stream_sync(_dev(handle), slot)


def dma_drain(uintptr_t handle):
    """Retire everything queued on every stream: status."""
    return tvmd_woofles_dma_drain(_dev(handle))


def stream_completed(uintptr_t handle, uint32_t slot):
    """How many descriptors the stream in ``slot`` has retired, ever."""
    from tvmdevice_woofles.device import MAX_STREAMS

    cdef tvm_device_woofles_t* dev = _dev(handle)
    if slot >= MAX_STREAMS:
        raise ValueError(f"stream slot {slot} out of range (the device has {MAX_STREAMS})")
    return (&dev.streams[0] + slot).completed


def capture(uintptr_t src, Py_ssize_t nbytes, uint8_t[::1] out):
    """Copy ``nbytes`` of host memory at ``src`` into ``out`` (a DMA bounce buffer).

    The caller has checked that ``[src, src + nbytes)`` is a live host range
    and that ``out`` holds at least ``nbytes``.
    """
    if nbytes < 0 or nbytes > out.shape[0]:
        raise ValueError(f"capture of {nbytes} bytes into a {out.shape[0]}-byte buffer")
    if nbytes:
        memcpy(&out[0], <const void*>src, <size_t>nbytes)


# ------------------------------------------------------------------ kernels
cdef dict _kernel_index():
    cdef uint32_t i
    return {tvmd_woofles_kernels[i].name.decode("ascii"): i for i in range(tvmd_woofles_num_kernels)}


_KERNELS = _kernel_index()
#: The C names of the kernels in the table, in table order.
KERNEL_NAMES = tuple(_KERNELS)


def kernel_capsule(str name):
    """The ``"tvmdevice.kernel"`` capsule of a kernel of the table, by its C name."""
    index = _KERNELS.get(name)
    if index is None:
        raise KeyError(f"no woofles kernel named {name!r}; known: {', '.join(KERNEL_NAMES)}")
    return capsules.kernel_capsule(&tvmd_woofles_kernels[<uint32_t>index])


def copy_kernel_capsule(bint to_device):
    """The ``"tvmdevice.kernel"`` capsule of the executor's copy step host -> SRAM (``to_device``) or back."""
    return capsules.kernel_capsule(&tvmd_woofles_copy_kernels[0 if to_device else 1])


# ------------------------------------------------------- host lifecycle steps
# Activate and Deactivate as the Python host runs them: the C transition, with the host wall-clock time
# of the state being left charged to ns_in_state first (CLOCK_MONOTONIC: the clock of time.monotonic_ns,
# which Init and counters() read).  Firmware has no host clock and calls TVMDeviceWoofles* directly.
cdef void _charge_time(tvm_device_woofles_t* dev) noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    cdef uint64_t now = <uint64_t>ts.tv_sec * 1000000000u + <uint64_t>ts.tv_nsec
    cdef uint64_t since = dev.state_since_ns
    if since != 0 and dev.power_state < 3 and now > since:
        dev.ns_in_state[dev.power_state] += now - since
    dev.state_since_ns = now


cdef int32_t _host_activate(void* device) noexcept nogil:
    if device == NULL:
        return TVMDeviceWooflesActivate(NULL)
    _charge_time(<tvm_device_woofles_t*>device)
    return TVMDeviceWooflesActivate(<tvm_device_woofles_t*>device)


cdef int32_t _host_deactivate(void* device) noexcept nogil:
    if device == NULL:
        return TVMDeviceWooflesDeactivate(NULL)
    _charge_time(<tvm_device_woofles_t*>device)
    return TVMDeviceWooflesDeactivate(<tvm_device_woofles_t*>device)


cdef tvmd_lifecycle_t _host_lifecycle
_host_lifecycle.abi_version = TVMD_LIFECYCLE_ABI_VERSION
_host_lifecycle.struct_size = sizeof(tvmd_lifecycle_t)
_host_lifecycle.init = NULL  # Init, Open, Close and Destroy stay the plugin's Python hooks (SRAM backing,
_host_lifecycle.open = NULL  # DMA bounce buffers, Configure from the target options)
_host_lifecycle.activate = _host_activate
_host_lifecycle.deactivate = _host_deactivate
_host_lifecycle.close = NULL
_host_lifecycle.destroy = NULL
#: The ``"tvmdevice.lifecycle"`` capsule of the host's Activate and Deactivate (the other steps are NULL):
#: ``plugin.py`` takes those two hooks from it, so the executor's run loop calls them in C.
LIFECYCLE = capsules.lifecycle_capsule(&_host_lifecycle)
