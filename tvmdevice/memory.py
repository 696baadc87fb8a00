"""Host buffers and allocation bookkeeping shared by every device.

The framework tracks each device's live allocations so that it can refuse
double frees and foreign pointers before a plugin sees them, check that
every copy stays inside its buffers, and free what is left at Close.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import InvalidArgumentError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = ["Allocation", "aligned_empty", "address_of", "check_alignment"]


@dataclass(frozen=True)
class Allocation:
    """One live allocation: a data-space or workspace block."""

    ptr: int
    nbytes: int
    alignment: int
    kind: str  # "data" or "workspace"
    type_hint: str | None = None

    def contains(self, offset_ptr: int, nbytes: int) -> bool:
        return self.ptr <= offset_ptr and offset_ptr + nbytes <= self.ptr + max(self.nbytes, 0)


def check_alignment(alignment: int) -> int:
    """Validate an alignment: a positive power of two."""
    try:
        value = operator.index(alignment)
    except TypeError:
        value = 0
    if isinstance(alignment, bool) or value <= 0 or value & (value - 1):
        raise InvalidArgumentError(f"alignment must be a positive power of two, got {alignment!r}")
    return value


def aligned_empty(nbytes: int, alignment: int, *, zero: bool = True) -> "np.ndarray":
    """A uint8 host buffer of ``nbytes`` whose first byte is ``alignment``-aligned.

    The returned array is a view into a slightly larger allocation; keep the
    view alive for as long as its address is in use.
    """
    import numpy as np

    alignment = check_alignment(alignment)
    raw = (np.zeros if zero else np.empty)(nbytes + alignment, dtype=np.uint8)
    shift = (-address_of(raw)) % alignment
    return raw[shift : shift + nbytes]


def address_of(array: "np.ndarray") -> int:
    """The host address of an array's first byte."""
    return int(array.__array_interface__["data"][0])


class HostHeap:
    """The blocks a host-memory device has handed out, kept alive until freed.

    Every host-memory plugin (the built-in ``c``, ``cmsis-nn``, test devices)
    needs the same three things: a zeroed, aligned block per AllocDataSpace
    with a unique address even for zero bytes, the block kept alive until
    FreeDataSpace, and the bytes in use for GetAttr and out-of-memory errors.

    :param capacity: bytes the device may hand out; 0 means no cap.
    """

    def __init__(self, capacity: int = 0) -> None:
        self.capacity = capacity
        self.bytes_in_use = 0
        self.peak_bytes = 0
        self._blocks: dict[int, tuple["np.ndarray", int]] = {}

    def __len__(self) -> int:
        return len(self._blocks)

    def alloc(self, nbytes: int, alignment: int, *, device: str = "device") -> int:
        """A new block's address.

        :raises DeviceMemoryError: beyond ``capacity``, saying requested, free and largest free block.
        """
        from .errors import DeviceMemoryError

        if self.capacity and self.bytes_in_use + nbytes > self.capacity:
            free = self.capacity - self.bytes_in_use
            raise DeviceMemoryError(f"device {device!r}: out of memory: requested {nbytes} B, free {free} B, "
                                    f"largest free block {free} B (of {self.capacity} B)")
        buf = aligned_empty(max(nbytes, 1), alignment)
        ptr = address_of(buf)
        self._blocks[ptr] = (buf, nbytes)
        self.bytes_in_use += nbytes
        self.peak_bytes = max(self.peak_bytes, self.bytes_in_use)
        return ptr

    def free(self, ptr: int) -> int:
        """Release a block; returns its size.  (The framework has already refused foreign pointers.)"""
        _, nbytes = self._blocks.pop(ptr)
        self.bytes_in_use -= nbytes
        return nbytes

    def views(self) -> list["np.ndarray"]:
        """A writable uint8 view of each live block (for plugins that model what happens to memory)."""
        return [buf[:nbytes] for buf, nbytes in self._blocks.values()]

    def clear(self) -> None:
        """Release every block (Close)."""
        self._blocks.clear()
        self.bytes_in_use = 0


def host_heap(device, capacity: int = 0) -> HostHeap:
    """The :class:`HostHeap` of a host-memory device, created on first use."""
    heap = device.plugin_state.get("heap")
    if heap is None:
        heap = device.plugin_state["heap"] = HostHeap(capacity)
    return heap


def copy_host(src: int, src_offset: int, dst: int, dst_offset: int, nbytes: int) -> None:
    """CopyDataFromTo between two host addresses (ranges already checked by the framework)."""
    from ._hostmem import copy_bytes

    copy_bytes(dst + dst_offset, src + src_offset, nbytes)
