"""The memory contract: AllocDataSpace, AllocWorkspace and FreeDataSpace.

Allocations honour every power-of-two alignment up to 4096 bytes and every
size including 0, never overlap, keep their contents across
Deactivate/Activate, are all released at Close, and running out of memory
is a clean :class:`~tvmdevice.errors.DeviceMemoryError` after which the
device still works.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...attrs import DeviceAttrKind
from ...device_type import MemoryKind
from ...errors import DeviceMemoryError, LeakWarning, TVMDeviceError
from ...lifecycle import State
from ._base import Check, CheckContext, Contract
from ._io import first_difference, pattern, read, write

__all__ = ["CONTRACT", "check_alignment", "check_sizes", "check_kept_across_deactivate", "check_no_leaks",
           "check_out_of_memory"]

NAME = "memory"
ALIGNMENTS = tuple(1 << k for k in range(13))  # 1 .. 4096
SIZES = (0, 0, 1, 2, 3, 7, 64, 100, 1000, 4097)
#: Asked of devices that do not answer kTotalGlobalMemory: more than any microcontroller has.
HUGE = 1 << 40
#: A host-memory device reporting at least this much total memory is taken to report the machine's RAM.
HOST_SCALE = 1 << 30


def _verify_blocks(ctx: CheckContext, dev, blocks: dict[int, np.ndarray], when: str) -> None:
    """Write each block's pattern, then read every block back: catches overlaps and lost writes."""
    for ptr, data in blocks.items():
        with ctx.calling(f"writing {data.size} byte(s) to {ptr:#x} {when}"):
            write(dev, ptr, data)
    _expect_blocks(ctx, dev, blocks, when)


def _expect_blocks(ctx: CheckContext, dev, blocks: dict[int, np.ndarray], when: str) -> None:
    for ptr, data in blocks.items():
        with ctx.calling(f"reading {data.size} byte(s) from {ptr:#x} {when}"):
            got = read(dev, ptr, data.size)
        if not np.array_equal(got, data):
            ctx.fail(f"the {data.size}-byte block at {ptr:#x} reads back wrong {when} "
                     f"({first_difference(got, data)}); blocks must not overlap and must keep what was written")


def _close_cleanly(ctx: CheckContext, dev, when: str) -> None:
    """Close ``dev`` expecting no leak report (the check freed everything)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LeakWarning)
        with ctx.calling(f"Close {when}"):
            dev.close()
    leaks = [w for w in caught if issubclass(w.category, LeakWarning)]
    if leaks:
        ctx.fail(f"Close {when} reported a leak although the application freed everything: {leaks[0].message}")
    if dev.allocations or dev.streams:
        ctx.fail(f"after Close {when} the framework still tracks {len(dev.allocations)} allocation(s) and "
                 f"{len(dev.streams)} stream(s)")


def check_alignment(ctx: CheckContext) -> str:
    """Every power-of-two alignment from 1 to 4096 bytes is honoured, and the blocks are usable."""
    dev = ctx.new_device()
    blocks: dict[int, np.ndarray] = {}
    for k, alignment in enumerate(ALIGNMENTS):
        nbytes = 24 + k
        with ctx.calling(f"AllocDataSpace({nbytes}, alignment={alignment})"):
            ptr = dev.alloc_data_space(nbytes, alignment)
        if ptr % alignment:
            ctx.fail(f"AllocDataSpace({nbytes}, alignment={alignment}) returned {ptr:#x}, not aligned")
        blocks[ptr] = pattern(nbytes, seed=k)
    _verify_blocks(ctx, dev, blocks, "with all alignments live")
    for ptr in blocks:
        with ctx.calling(f"FreeDataSpace({ptr:#x})"):
            dev.free_data_space(ptr)
    _close_cleanly(ctx, dev, "after freeing the aligned blocks")
    return f"alignments {ALIGNMENTS[0]}..{ALIGNMENTS[-1]}"


def check_sizes(ctx: CheckContext) -> str:
    """Sizes from 0 bytes up (data space, shaped data space and workspace) give distinct, usable blocks."""
    dev = ctx.new_device()
    blocks: dict[int, np.ndarray] = {}
    for k, nbytes in enumerate(SIZES):
        with ctx.calling(f"AllocDataSpace({nbytes})"):
            ptr = dev.alloc_data_space(nbytes, 8)
        blocks[ptr] = pattern(nbytes, seed=100 + k)
    with ctx.calling("GetDataSize((3, 5), int32)"):
        scoped_size = dev.get_data_size((3, 5), "int32")
    if scoped_size < 60:
        ctx.fail(f"GetDataSize((3, 5), 'int32') is {scoped_size}, less than the 60 bytes the tensor holds")
    with ctx.calling("AllocDataSpace(shape=(3, 5), dtype=int32)"):
        scoped = dev.alloc_data_space_scoped((3, 5), "int32")
    blocks[scoped] = pattern(60, seed=200)
    with ctx.calling("AllocWorkspace(300)"):
        outer = dev.alloc_workspace(300)
    with ctx.calling("AllocWorkspace(17) on top of another workspace"):
        inner = dev.alloc_workspace(17)
    blocks[outer], blocks[inner] = pattern(300, seed=201), pattern(17, seed=202)
    if len(blocks) != len(SIZES) + 3:
        ctx.fail("two live allocations got the same pointer")
    _verify_blocks(ctx, dev, blocks, "with every size live")
    # Workspace is released in stack order, as the executor does.
    for label, fn, ptr in (("FreeWorkspace", dev.free_workspace, inner), ("FreeWorkspace", dev.free_workspace, outer),
                           ("FreeDataSpace", dev.free_data_space, scoped)):
        with ctx.calling(f"{label}({ptr:#x})"):
            fn(ptr)
        del blocks[ptr]
    for ptr in blocks:
        with ctx.calling(f"FreeDataSpace({ptr:#x})"):
            dev.free_data_space(ptr)
    _close_cleanly(ctx, dev, "after freeing blocks of every size")
    return f"{len(SIZES)} sizes from {min(SIZES)} to {max(SIZES)} bytes, shaped and workspace blocks"


def check_kept_across_deactivate(ctx: CheckContext) -> str:
    """Device memory keeps its contents across Deactivate/Activate (low power must not wipe it)."""
    dev = ctx.new_device(State.ACTIVE)
    blocks: dict[int, np.ndarray] = {}
    for k, nbytes in enumerate((1, 256, 4096)):
        with ctx.calling(f"AllocDataSpace({nbytes}) while active"):
            blocks[dev.alloc_data_space(nbytes, 64)] = pattern(nbytes, seed=300 + k)
    _verify_blocks(ctx, dev, blocks, "while active")
    cycles = 3
    for cycle in range(1, cycles + 1):
        with ctx.calling(f"Deactivate (cycle {cycle})"):
            dev.deactivate()
        _expect_blocks(ctx, dev, blocks, f"after Deactivate (cycle {cycle})")
        # Written while deactivated: must survive the next Activate too.
        blocks = {ptr: pattern(data.size, seed=400 + 10 * cycle + k) for k, (ptr, data) in enumerate(blocks.items())}
        _verify_blocks(ctx, dev, blocks, f"while deactivated (cycle {cycle})")
        with ctx.calling(f"Activate (cycle {cycle})"):
            dev.activate()
        _expect_blocks(ctx, dev, blocks, f"after Deactivate and Activate (cycle {cycle})")
    with ctx.calling("Deactivate"):
        dev.deactivate()
    for ptr in blocks:
        with ctx.calling(f"FreeDataSpace({ptr:#x})"):
            dev.free_data_space(ptr)
    _close_cleanly(ctx, dev, "after the Deactivate/Activate cycles")
    return f"{len(blocks)} blocks over {cycles} Deactivate/Activate cycles"


def _available(ctx: CheckContext, dev, when: str) -> int | None:
    with ctx.calling(f"GetAttr(kAvailableGlobalMemory) {when}"):
        value = dev.get_attr(DeviceAttrKind.kAvailableGlobalMemory)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_no_leaks(ctx: CheckContext) -> str:
    """Close releases everything: the framework's table empties, and the device's free memory comes back."""
    dev = ctx.new_device()
    before = _available(ctx, dev, "after Open")
    compare = ctx.device_type.memory is MemoryKind.SEPARATE
    sizes = (16, 1024, 3000)
    for round_, leave in enumerate((False, True)):
        ptrs = []
        for nbytes in sizes:
            with ctx.calling(f"AllocDataSpace({nbytes})"):
                ptrs.append(dev.alloc_data_space(nbytes, 16))
        if round_ == 0 and before is not None:
            # Host-memory devices often report the process' free memory, which
            # moves by itself; compare only a device that accounts for its
            # own blocks (separate memory, or exactly the bytes just taken).
            during = _available(ctx, dev, "with blocks allocated")
            compare = compare or (during is not None and before - during == sum(sizes))
        with ctx.calling("AllocWorkspace(512)"):
            work = dev.alloc_workspace(512)
        with ctx.calling("CreateStream"):
            stream = dev.create_stream()
        if leave:
            # The application forgets to free: Close must free it and say so.
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", LeakWarning)
                with ctx.calling("Close with allocations and a stream left live"):
                    dev.close()
            if not any(issubclass(w.category, LeakWarning) for w in caught):
                ctx.fail("Close with allocations left live did not report a LeakWarning")
            if dev.allocations or dev.streams:
                ctx.fail(f"Close left {len(dev.allocations)} allocation(s) and {len(dev.streams)} stream(s) in "
                         f"the framework's table")
        else:
            with ctx.calling("FreeWorkspace"):
                dev.free_workspace(work)
            with ctx.calling("FreeStream"):
                dev.free_stream(stream)
            for ptr in ptrs:
                with ctx.calling(f"FreeDataSpace({ptr:#x})"):
                    dev.free_data_space(ptr)
            _close_cleanly(ctx, dev, "after freeing everything")
        with ctx.calling(f"Open again after Close (round {round_ + 1})"):
            dev.open()
        after = _available(ctx, dev, f"after Close and Open (round {round_ + 1})")
        if compare and after != before:
            how = "the framework freed what was left" if leave else "everything was freed"
            ctx.fail(f"kAvailableGlobalMemory was {before} after Open but {after} after Close and Open again "
                     f"({how}); Close must release all device memory")
    _close_cleanly(ctx, dev, "at the end")
    if compare:
        return "framework table empty; kAvailableGlobalMemory restored"
    why = "not answered" if before is None else "it tracks more than this device's blocks"
    return f"framework table empty; kAvailableGlobalMemory not compared ({why})"


def check_out_of_memory(ctx: CheckContext) -> str:
    """Asking for more than the device has raises DeviceMemoryError and leaves the device usable."""
    dev = ctx.new_device()
    with ctx.calling("GetAttr(kTotalGlobalMemory)"):
        total = dev.get_attr(DeviceAttrKind.kTotalGlobalMemory)
    requests = [HUGE]
    # "total + 1" tests the device's own accounting.  A host-memory device that
    # reports the machine's RAM is exempt: the OS may overcommit RAM + 1 byte.
    own = ctx.device_type.memory is MemoryKind.SEPARATE or (isinstance(total, int) and total < HOST_SCALE)
    if isinstance(total, int) and not isinstance(total, bool) and total > 0 and own:
        requests.insert(0, total + 1)
    keep_data = pattern(64, seed=500)
    with ctx.calling("AllocDataSpace(64) before running out of memory"):
        keep = dev.alloc_data_space(64, 64)
    _verify_blocks(ctx, dev, {keep: keep_data}, "before running out of memory")
    for nbytes in requests:
        tracked = dict(dev.allocations)
        try:
            ptr = dev.alloc_data_space(nbytes, 64)
        except DeviceMemoryError:
            pass
        except TVMDeviceError as exc:
            ctx.fail(f"AllocDataSpace({nbytes}) beyond the device's memory raised {type(exc).__name__} "
                     f"({exc}); out of memory must be a DeviceMemoryError")
        else:
            dev.free_data_space(ptr)
            ctx.fail(f"AllocDataSpace({nbytes}) succeeded although the device has "
                     f"{'kTotalGlobalMemory=' + str(total) if total else 'no such memory'}")
        if dev.allocations != tracked:
            ctx.fail(f"a failed AllocDataSpace({nbytes}) changed the framework's allocation table")
        if dev.faulted or dev.state is not State.OPENED:
            ctx.fail(f"a failed AllocDataSpace({nbytes}) left the device {dev!r}")
    _expect_blocks(ctx, dev, {keep: keep_data}, "after running out of memory")
    with ctx.calling("AllocDataSpace(128) after running out of memory"):
        again = dev.alloc_data_space(128, 64)
    _verify_blocks(ctx, dev, {again: pattern(128, seed=501)}, "allocated after running out of memory")
    for ptr in (again, keep):
        with ctx.calling(f"FreeDataSpace({ptr:#x}) after running out of memory"):
            dev.free_data_space(ptr)
    _close_cleanly(ctx, dev, "after running out of memory")
    return "asked " + ", ".join(f"{n} B" for n in requests)


CONTRACT = Contract(NAME, "alignment, sizes, contents kept across Deactivate, nothing leaked, clean OOM", (
    Check("alignment", check_alignment, check_alignment.__doc__ or ""),
    Check("sizes", check_sizes, check_sizes.__doc__ or ""),
    Check("kept-across-deactivate", check_kept_across_deactivate, check_kept_across_deactivate.__doc__ or ""),
    Check("no-leaks", check_no_leaks, check_no_leaks.__doc__ or ""),
    Check("out-of-memory", check_out_of_memory, check_out_of_memory.__doc__ or ""),
))
