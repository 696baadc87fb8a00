"""The copies-and-streams contract: CopyDataFromTo and the stream API.

Copies work host->device, device->host and device->device with byte offsets
on both sides and touch nothing outside the destination range; copies on one
stream happen in order; SyncStreamFromTo orders one stream after another;
CreateStream/FreeStream/SetStream/GetCurrentStream keep their promises.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...device import HOST_MEMORY
from ._base import Check, CheckContext, Contract
from ._io import first_difference, pattern, read, write

__all__ = ["CONTRACT", "check_host_to_device", "check_device_to_host", "check_device_to_device",
           "check_stream_order", "check_sync_stream_from_to", "check_stream_handles"]

NAME = "copies"


def _ranges() -> Any:
    """(block size, source offset, destination offset, byte count) with the ranges inside their buffers."""
    from hypothesis import strategies as st

    @st.composite
    def ranges(draw: Any) -> tuple[int, int, int, int]:
        size = draw(st.integers(1, 600), label="size")
        nbytes = draw(st.integers(0, size), label="nbytes")
        src_offset = draw(st.integers(0, size - nbytes), label="src_offset")
        dst_offset = draw(st.integers(0, size - nbytes), label="dst_offset")
        return size, src_offset, dst_offset, nbytes

    return ranges()


def _expect(ctx: CheckContext, got: np.ndarray, want: np.ndarray, what: str) -> None:
    if not np.array_equal(got, want):
        ctx.fail(f"{what}: {first_difference(got, want)}")


def _alloc(ctx: CheckContext, dev, nbytes: int, seed: int) -> tuple[int, np.ndarray]:
    """A block filled with a known pattern, so bytes outside a copy's range can be checked."""
    data = pattern(nbytes, seed)
    with ctx.calling(f"AllocDataSpace({nbytes})"):
        ptr = dev.alloc_data_space(nbytes, 64)
    with ctx.calling(f"host->device copy of {nbytes} byte(s) to fill a block"):
        write(dev, ptr, data)
    return ptr, data


def _free(ctx: CheckContext, dev, *ptrs: int) -> None:
    for ptr in ptrs:
        with ctx.calling(f"FreeDataSpace({ptr:#x})"):
            dev.free_data_space(ptr)


def check_host_to_device(ctx: CheckContext) -> str:
    """Host->device copies land at dst + dst_offset from src + src_offset, and nowhere else."""
    from hypothesis import given

    dev = ctx.new_device()

    @ctx.settings()
    @given(_ranges())
    def prop(r: tuple[int, int, int, int]) -> None:
        size, src_offset, dst_offset, nbytes = r
        ptr, want = _alloc(ctx, dev, size, seed=size)
        src = pattern(size, seed=size + 1)
        what = f"host->device copy of {nbytes} B from host offset {src_offset} to offset {dst_offset} of {size} B"
        with ctx.calling(what):
            dev.copy_data_from_to(src, src_offset, ptr, dst_offset, nbytes, HOST_MEMORY, dev, None, 0)
            dev.stream_sync(0)
        want = want.copy()
        want[dst_offset:dst_offset + nbytes] = src[src_offset:src_offset + nbytes]
        with ctx.calling("device->host copy reading the block back"):
            got = read(dev, ptr, size)
        _expect(ctx, got, want, what)
        _free(ctx, dev, ptr)

    prop()
    return f"{ctx.examples} generated copies"


def check_device_to_host(ctx: CheckContext) -> str:
    """Device->host copies read from src + src_offset into dst + dst_offset, and write nothing else."""
    from hypothesis import given

    dev = ctx.new_device()

    @ctx.settings()
    @given(_ranges())
    def prop(r: tuple[int, int, int, int]) -> None:
        size, src_offset, dst_offset, nbytes = r
        ptr, data = _alloc(ctx, dev, size, seed=size + 2)
        out = pattern(size, seed=size + 3)
        want = out.copy()
        want[dst_offset:dst_offset + nbytes] = data[src_offset:src_offset + nbytes]
        what = f"device->host copy of {nbytes} B from offset {src_offset} of {size} B to host offset {dst_offset}"
        with ctx.calling(what):
            dev.copy_data_from_to(ptr, src_offset, out, dst_offset, nbytes, dev, HOST_MEMORY, None, 0)
            dev.stream_sync(0)
        _expect(ctx, out, want, what)
        _free(ctx, dev, ptr)

    prop()
    return f"{ctx.examples} generated copies"


def check_device_to_device(ctx: CheckContext) -> str:
    """Device->device copies between two blocks honour both offsets and leave the source intact."""
    from hypothesis import given

    dev = ctx.new_device()

    @ctx.settings()
    @given(_ranges())
    def prop(r: tuple[int, int, int, int]) -> None:
        size, src_offset, dst_offset, nbytes = r
        src, src_data = _alloc(ctx, dev, size, seed=size + 4)
        dst, dst_data = _alloc(ctx, dev, size, seed=size + 5)
        what = f"device->device copy of {nbytes} B from offset {src_offset} to offset {dst_offset} of {size} B"
        with ctx.calling(what):
            dev.copy_data_from_to(src, src_offset, dst, dst_offset, nbytes, dev, dev, None, 0)
            dev.stream_sync(0)
        want = dst_data.copy()
        want[dst_offset:dst_offset + nbytes] = src_data[src_offset:src_offset + nbytes]
        with ctx.calling("device->host copies reading both blocks back"):
            got_dst, got_src = read(dev, dst, size), read(dev, src, size)
        _expect(ctx, got_dst, want, what)
        _expect(ctx, got_src, src_data, f"{what} changed its source")
        _free(ctx, dev, src, dst)

    prop()
    return f"{ctx.examples} generated copies"


def check_stream_order(ctx: CheckContext) -> str:
    """Work queued on one stream happens in order: the last of two copies wins, dependent copies see data."""
    dev = ctx.new_device()
    size = 4096
    with ctx.calling("CreateStream"):
        stream = dev.create_stream()
    with ctx.calling(f"AllocDataSpace({size}) x2"):
        a, b = dev.alloc_data_space(size, 64), dev.alloc_data_space(size, 64)
    first, second, third = pattern(size, 600), pattern(size, 601), pattern(size, 602)
    # Host buffers of queued copies stay referenced here until the sync.
    with ctx.calling(f"two host->device copies to the same place on stream {stream}"):
        dev.copy_data_from_to(first, 0, a, 0, size, HOST_MEMORY, dev, None, stream)
        dev.copy_data_from_to(second, 0, a, 0, size, HOST_MEMORY, dev, None, stream)
        dev.stream_sync(stream)
    with ctx.calling("reading the block back"):
        got = read(dev, a, size)
    _expect(ctx, got, second, f"after two copies to one place on stream {stream} and StreamSync, "
                              f"the second did not win")
    out = np.zeros(size, np.uint8)
    with ctx.calling(f"host->device, device->device and device->host copies chained on stream {stream}"):
        dev.copy_data_from_to(third, 0, a, 0, size, HOST_MEMORY, dev, None, stream)
        dev.copy_data_from_to(a, 0, b, 0, size, dev, dev, None, stream)
        dev.copy_data_from_to(b, 0, out, 0, size, dev, HOST_MEMORY, None, stream)
        dev.stream_sync(stream)
    _expect(ctx, out, third, f"a chain of dependent copies on stream {stream} ran out of order")
    _free(ctx, dev, a, b)
    with ctx.calling(f"FreeStream({stream})"):
        dev.free_stream(stream)
    return "same-place copies and a dependent chain"


def check_sync_stream_from_to(ctx: CheckContext) -> str:
    """After SyncStreamFromTo(s1, s2), work on s2 sees everything queued on s1 before it."""
    dev = ctx.new_device()
    size = 4096
    with ctx.calling("CreateStream x2"):
        s1, s2 = dev.create_stream(), dev.create_stream()
    with ctx.calling(f"AllocDataSpace({size}) x2"):
        a, b = dev.alloc_data_space(size, 64), dev.alloc_data_space(size, 64)
    data, out = pattern(size, 700), np.zeros(size, np.uint8)
    with ctx.calling(f"host->device copy on stream {s1}, SyncStreamFromTo({s1}, {s2}), then copies on {s2}"):
        dev.copy_data_from_to(data, 0, a, 0, size, HOST_MEMORY, dev, None, s1)
        dev.sync_stream_from_to(s1, s2)
        dev.copy_data_from_to(a, 0, b, 0, size, dev, dev, None, s2)
        dev.copy_data_from_to(b, 0, out, 0, size, dev, HOST_MEMORY, None, s2)
        # Only s2 is synchronised: it waited for s1, so s1's copy is done too.
        dev.stream_sync(s2)
    _expect(ctx, out, data, f"copies on stream {s2} after SyncStreamFromTo({s1}, {s2}) did not see the copy "
                            f"queued on {s1}")
    with ctx.calling(f"StreamSync({s1})"):
        dev.stream_sync(s1)
    _free(ctx, dev, a, b)
    for s in (s1, s2):
        with ctx.calling(f"FreeStream({s})"):
            dev.free_stream(s)
    return "cross-stream dependency honoured"


def check_stream_handles(ctx: CheckContext) -> str:
    """CreateStream gives distinct non-zero handles; SetStream/GetCurrentStream agree; the current stream is used."""
    dev = ctx.new_device()
    with ctx.calling("GetCurrentStream on a fresh device"):
        current = dev.get_current_stream()
    if current != 0:
        ctx.fail(f"GetCurrentStream on a fresh device is {current}, expected the default stream 0")
    with ctx.calling("CreateStream x3"):
        streams = [dev.create_stream() for _ in range(3)]
    if len(set(streams)) != 3 or 0 in streams:
        ctx.fail(f"CreateStream returned {streams}; handles must be distinct and non-zero")
    for s in streams + [0]:
        with ctx.calling(f"SetStream({s})"):
            dev.set_stream(s)
        with ctx.calling(f"GetCurrentStream after SetStream({s})"):
            current = dev.get_current_stream()
        if current != s:
            ctx.fail(f"GetCurrentStream after SetStream({s}) is {current}")
    # A copy without a stream goes to the current stream; syncing that stream
    # must make it visible.
    size, data = 512, pattern(512, 800)
    with ctx.calling(f"AllocDataSpace({size})"):
        ptr = dev.alloc_data_space(size, 64)
    with ctx.calling(f"host->device copy on the current stream {streams[1]}"):
        dev.set_stream(streams[1])
        dev.copy_data_from_to(data, 0, ptr, 0, size, HOST_MEMORY, dev, None, None)
        dev.stream_sync(streams[1])
        dev.set_stream(0)
    with ctx.calling("reading the block back"):
        got = read(dev, ptr, size)
    _expect(ctx, got, data, f"a copy queued on the current stream {streams[1]} was not visible after "
                            f"StreamSync({streams[1]})")
    _free(ctx, dev, ptr)
    for s in streams:
        with ctx.calling(f"FreeStream({s})"):
            dev.free_stream(s)
    with ctx.calling("CreateStream after freeing streams"):
        again = dev.create_stream()
    with ctx.calling(f"FreeStream({again})"):
        dev.free_stream(again)
    if dev.streams:
        ctx.fail(f"streams {sorted(dev.streams)} are still tracked after FreeStream")
    return f"{len(streams) + 1} streams created and freed"


CONTRACT = Contract(NAME, "host/device copies with byte offsets, stream ordering, SyncStreamFromTo", (
    Check("host-to-device", check_host_to_device, check_host_to_device.__doc__ or ""),
    Check("device-to-host", check_device_to_host, check_device_to_host.__doc__ or ""),
    Check("device-to-device", check_device_to_device, check_device_to_device.__doc__ or ""),
    Check("stream-order", check_stream_order, check_stream_order.__doc__ or ""),
    Check("sync-stream-from-to", check_sync_stream_from_to, check_sync_stream_from_to.__doc__ or ""),
    Check("stream-handles", check_stream_handles, check_stream_handles.__doc__ or ""),
))
