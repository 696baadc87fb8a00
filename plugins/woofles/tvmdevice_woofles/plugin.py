"""The woofles plugin: tvmdevice hook implementations for the simulated NPU.

Light to import: the compiled extension (``_woofles``: lifecycle, allocator,
DMA engine and kernels) loads inside the hooks that need it.  The device's
state lives in its ``tvm_device_woofles_t`` (``device.handle``), which the C
code owns; Python keeps only the host memory that backs the SRAM and the DMA
bounce buffers, in ``device.plugin_state``.
"""

from __future__ import annotations

import collections
import time
from typing import TYPE_CHECKING, Any

from tvmdevice.errors import DeviceMemoryError, InvalidArgumentError, LifecycleError
from tvmdevice.plugin import (
    CLifecycle,
    DeviceAttrKind,
    Status,
    address_of,
    aligned_empty,
    error_for_status,
    hookimpl,
)

from .device import (
    DEVICE_TYPE,
    LAYOUT,
    MAX_STREAMS,
    SRAM_BASE,
    SRAM_HOST_ALIGNMENT,
    DmaFlag,
    PowerState,
    config_values,
)

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.device import Device
    from tvmdevice.device_type import DeviceType
    from tvmdevice.export import DeviceSources
    from tvmdevice.ir import Graph, Operator
    from tvmdevice.kernel import PreparedCall
    from tvmdevice.ops import OpData

__all__ = ["DEVICE_TYPE"]

NAME = DEVICE_TYPE.name


@hookimpl
def tvmdevice_device_types() -> list["DeviceType"]:
    return [DEVICE_TYPE]


# ------------------------------------------------------------------ helpers
def _c() -> Any:
    from . import _woofles

    return _woofles


def _power(device: "Device") -> PowerState:
    return PowerState(int(device.fields["power_state"][0]))


def _raise_for(status: int, device: "Device", what: str) -> None:
    if status == Status.OK:
        return
    if status == Status.INVALID_STATE:
        raise LifecycleError(f"device {NAME!r} refused {what} in power state {_power(device).name}")
    # error_for_status names the code, a tvmd_status_t one or not.
    name = Status(status).name if status in Status._value2member_map_ else status
    raise error_for_status(status, f"device {NAME!r}: {what} failed (status {name})")


def _close_time_interval(device: "Device") -> None:
    # Host wall-clock time in each power state: charge the interval that ends
    # now to the state the device is leaving (or staying in).
    f = device.fields
    now = time.monotonic_ns()
    since = int(f["state_since_ns"][0])
    if since:
        f["ns_in_state"][int(f["power_state"][0])] += max(now - since, 0)
    f["state_since_ns"][0] = now


def _transition(device: "Device", what: str, fn_name: str) -> None:
    _close_time_interval(device)
    _raise_for(getattr(_c(), fn_name)(device.handle_address), device, what)


# ---------------------------------------------------------------- lifecycle
class Lifecycle(CLifecycle):
    """The woofles lifecycle: the extension's C table, with Init, Open, Close and Destroy done here.

    Activate and Deactivate stay C (the capsule's host steps: the transition, with the wall-clock time
    of the state left charged first), so the executor's run loop calls them without Python.  The four
    steps overridden here hand the SRAM's host backing and the DMA bounce buffers over, which C cannot.
    """

    @hookimpl
    def tvmdevice_init(self, device: "Device", options: dict[str, Any]) -> None:
        # Init, then Configure, as an exported model's generated code does.  The
        # declared options carry the bounds (checked when the target is parsed);
        # the SRAM's backing is handed over at Open.
        c = _c()
        _raise_for(c.init(device.handle_address), device, "Init")
        config = config_values(options)
        status = c.configure(device.handle_address, 0, SRAM_BASE, config["sram_size"], config["mac_width"],
                             config["dma_bytes_per_cycle"], config["clock_mhz"])
        if status != Status.OK:
            c.destroy(device.handle_address)  # back to uninitialized: Init did not happen
            _raise_for(status, device, f"Configure({config})")
        device.fields["state_since_ns"][0] = time.monotonic_ns()

    @hookimpl
    def tvmdevice_destroy(self, device: "Device") -> None:
        _transition(device, "Destroy", "destroy")
        device.plugin_state.clear()

    @hookimpl
    def tvmdevice_open(self, device: "Device") -> None:
        f = device.fields
        # Open (in C) zeroes it: a freshly powered SRAM reads as zeros.
        sram = aligned_empty(int(f["sram_size"][0]), SRAM_HOST_ALIGNMENT, zero=False)
        f["sram_host"][0] = address_of(sram)
        try:
            _transition(device, "Open", "open")
        except BaseException:
            f["sram_host"][0] = 0
            raise
        device.plugin_state["sram"] = sram
        device.plugin_state["bounce"] = collections.defaultdict(collections.deque)

    @hookimpl
    def tvmdevice_close(self, device: "Device") -> None:
        try:
            power = _power(device)
            if power is PowerState.OFF:
                return  # Open failed: nothing was powered
            if power is PowerState.ACTIVE:
                _transition(device, "Deactivate", "deactivate")  # after a failed Deactivate
            _transition(device, "Close", "close")
        finally:
            # Only after the C side drained the queues: descriptors point into
            # the bounce buffers and the SRAM backing.
            device.fields["sram_host"][0] = 0  # the backing goes with plugin_state["sram"]
            device.plugin_state.pop("bounce", None)
            device.plugin_state.pop("sram", None)


lifecycle = Lifecycle("tvmdevice_woofles._woofles:LIFECYCLE", NAME)


# --------------------------------------------------------------- attributes
_NOT_APPLICABLE = frozenset({
    DeviceAttrKind.kMaxThreadsPerBlock, DeviceAttrKind.kWarpSize, DeviceAttrKind.kMaxSharedMemoryPerBlock,
    DeviceAttrKind.kComputeVersion, DeviceAttrKind.kMaxThreadDimensions, DeviceAttrKind.kMaxRegistersPerBlock,
    DeviceAttrKind.kGcnArch, DeviceAttrKind.kDriverVersion, DeviceAttrKind.kL2CacheSizeBytes,
    DeviceAttrKind.kImagePitchAlignment,
})


@hookimpl
def tvmdevice_get_attr(device: "Device", kind: int) -> Any:
    kind = DeviceAttrKind(kind)
    f = device.fields
    if kind is DeviceAttrKind.kExist:
        return 1
    if kind is DeviceAttrKind.kDeviceName:
        return NAME
    if kind is DeviceAttrKind.kMaxClockRate:
        return int(f["clock_mhz"][0]) * 1000  # kHz, as TVM reports it
    if kind is DeviceAttrKind.kMultiProcessorCount:
        return int(f["mac_width"][0])  # parallel MAC units
    if kind is DeviceAttrKind.kApiVersion:
        return int(f["api_version"][0])
    if kind is DeviceAttrKind.kTotalGlobalMemory:
        return int(f["sram_size"][0])
    if kind is DeviceAttrKind.kAvailableGlobalMemory:
        if _power(device) is PowerState.OFF:
            return int(f["sram_size"][0])  # all of it, once Open powers it
        return int(_c().alloc_stats(device.handle_address)[0])
    assert kind in _NOT_APPLICABLE, kind
    return None  # GPU notions an NPU does not have


# --------------------------------------------------------------- data space
@hookimpl
def tvmdevice_alloc_data_space(device: "Device", nbytes: int, alignment: int, type_hint: str | None) -> int:
    size = int(device.fields["sram_size"][0])
    if alignment > size:
        raise InvalidArgumentError(f"device {NAME!r}: alignment {alignment} exceeds the {size}-byte SRAM")
    status, addr = _c().alloc(device.handle_address, nbytes, alignment)
    if status == Status.OUT_OF_MEMORY:
        free, largest = _c().alloc_stats(device.handle_address)
        blocks = int(device.fields["num_blocks"][0])
        full = (f"; the allocation table is full ({blocks} blocks)"
                if blocks >= LAYOUT.field("block_offset").count[0] else "")
        raise DeviceMemoryError(
            f"device {NAME!r}: out of SRAM: requested {nbytes} B (alignment {alignment}), free {free} B, "
            f"largest free block {largest} B, of {size} B SRAM{full}; raise -sram_kb")
    _raise_for(status, device, f"AllocDataSpace({nbytes}, {alignment})")
    return int(addr)


@hookimpl
def tvmdevice_free_data_space(device: "Device", ptr: int) -> None:
    _raise_for(_c().free(device.handle_address, ptr), device, f"FreeDataSpace({ptr:#x})")


@hookimpl
def tvmdevice_supports_device_pointer_arithmetics_on_host(device: "Device") -> bool:
    return False  # device addresses name SRAM, not host memory


# ------------------------------------------------------------------- copies
def _bounce(device: "Device", slot: int) -> collections.deque:
    return device.plugin_state["bounce"][slot]


def _prune_bounces(device: "Device") -> None:
    # A bounce buffer may go once its descriptor has retired.
    c = _c()
    for slot, pending in device.plugin_state.get("bounce", {}).items():
        done = c.stream_completed(device.handle_address, slot)
        while pending and pending[0][0] <= done:
            pending.popleft()


@hookimpl
def tvmdevice_copy_data_from_to(device: "Device", src: int, src_offset: int, dst: int, dst_offset: int,
                                nbytes: int, src_device: "Device | None", dst_device: "Device | None",
                                type_hint: str | None, stream: int | None) -> None:
    if nbytes == 0:
        return
    slot = int(device.fields["current_stream"][0]) if stream is None else int(stream)
    flags = 0
    src_addr, dst_addr, keep = src + src_offset, dst + dst_offset, None
    if src_device is not device:
        # Host data is captured now, into a bounce buffer the DMA reads later:
        # the caller may reuse (or free) its buffer as soon as this returns.
        import numpy as np

        keep = np.empty(nbytes, dtype=np.uint8)
        _c().capture(src_addr, nbytes, keep)
        src_addr, flags = address_of(keep), flags | DmaFlag.SRC_HOST
    if dst_device is not device:
        flags |= DmaFlag.DST_HOST
    status, seq = _c().dma_enqueue(device.handle_address, slot, src_addr, dst_addr, nbytes, int(flags))
    if keep is not None and status == Status.OK:
        _bounce(device, slot).append((seq, keep))
    _prune_bounces(device)
    _raise_for(status, device, f"CopyDataFromTo of {nbytes} B on stream {slot}")


# ------------------------------------------------------------------ streams
@hookimpl
def tvmdevice_create_stream(device: "Device") -> int:
    status, slot = _c().stream_create(device.handle_address)
    if status == Status.OUT_OF_MEMORY:
        raise DeviceMemoryError(f"device {NAME!r}: all {MAX_STREAMS - 1} streams besides the default are in use; "
                                f"free one first")
    _raise_for(status, device, "CreateStream")
    return int(slot)


@hookimpl
def tvmdevice_free_stream(device: "Device", stream: int) -> None:
    status = _c().stream_free(device.handle_address, stream)
    _prune_bounces(device)
    _raise_for(status, device, f"FreeStream({stream})")
    if int(device.fields["current_stream"][0]) == stream:
        device.fields["current_stream"][0] = 0


@hookimpl
def tvmdevice_stream_sync(device: "Device", stream: int) -> None:
    status = _c().stream_sync(device.handle_address, stream)
    _prune_bounces(device)
    _raise_for(status, device, f"StreamSync({stream})")


@hookimpl
def tvmdevice_set_stream(device: "Device", stream: int) -> None:
    device.fields["current_stream"][0] = stream


@hookimpl
def tvmdevice_get_current_stream(device: "Device") -> int:
    return int(device.fields["current_stream"][0])


@hookimpl
def tvmdevice_sync_stream_from_to(device: "Device", event_src: int, event_dst: int) -> None:
    status = _c().dma_wait_stream(device.handle_address, event_src, event_dst)
    _prune_bounces(device)
    _raise_for(status, device, f"SyncStreamFromTo({event_src}, {event_dst})")


# ------------------------------------------------------------------ kernels
@hookimpl
def tvmdevice_memory_capacity(device_type: "DeviceType", options: dict[str, Any]) -> int:
    # Everything a compiled model keeps on the NPU lives in its SRAM.
    return int(options["sram_kb"]) * 1024


@hookimpl
def tvmdevice_prepare_operator(device_type: "DeviceType", options: dict[str, Any], graph: "Graph",
                               op: "Operator", op_data: "OpData | None") -> "PreparedCall":
    # check_operator is the framework's default (the declared operator types);
    # the NPU's limits are decided here, once, on the op data.
    from . import ops  # numpy and the kernel preparation load at compile time, not discovery

    return ops.prepare(graph, op, op_data, options)


@hookimpl
def tvmdevice_prepare_copy(device_type: "DeviceType", options: dict[str, Any], nbytes: int,
                           to_device: bool) -> "PreparedCall":
    # A run's copy as one C call: the synchronous DMA transfer CopyDataFromTo + StreamSync(0) make.
    from tvmdevice.kernel import PreparedCall
    from tvmdevice.params import ParamsStruct

    from .params import COPY_PARAMS

    return PreparedCall(name="tvmd_woofles_copy_" + ("to" if to_device else "from") + "_device",
                        kernel=_c().copy_kernel_capsule(to_device), params=ParamsStruct(COPY_PARAMS, nbytes=nbytes))


# ------------------------------------------------------------------- export
@hookimpl
def tvmdevice_export_sources(device_type: "DeviceType", options: dict[str, Any], cpu: str) -> "DeviceSources | None":
    # The same portable C as the extension, the generated headers, and a
    # generated configure function with the SRAM as a static array.
    from .export import export_sources

    return export_sources(options, cpu)
