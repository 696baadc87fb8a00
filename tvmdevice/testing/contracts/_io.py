"""Moving test bytes in and out of a device under test, synchronously.

Every helper names its stream and synchronises exactly that stream, so a
check never depends on which stream a device treats as "current".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...device import HOST_MEMORY

if TYPE_CHECKING:  # pragma: no cover
    from ...device import Device

__all__ = ["pattern", "write", "read", "first_difference"]


def pattern(nbytes: int, seed: int) -> np.ndarray:
    """``nbytes`` reproducible random bytes (never all equal, so shifts and wipes show)."""
    return np.random.default_rng(seed).integers(0, 256, size=nbytes, dtype=np.uint8)


def write(dev: "Device", ptr: int, data: np.ndarray, offset: int = 0, stream: int = 0) -> None:
    """Copy ``data`` (host) to ``ptr + offset`` on ``dev`` and wait for it."""
    data = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
    dev.copy_data_from_to(data, 0, ptr, offset, data.nbytes, HOST_MEMORY, dev, None, stream)
    dev.stream_sync(stream)


def read(dev: "Device", ptr: int, nbytes: int, offset: int = 0, stream: int = 0) -> np.ndarray:
    """``nbytes`` from ``ptr + offset`` on ``dev``, copied to a fresh host array after a sync."""
    out = np.zeros(nbytes, dtype=np.uint8)
    dev.copy_data_from_to(ptr, offset, out, 0, nbytes, dev, HOST_MEMORY, None, stream)
    dev.stream_sync(stream)
    return out


def first_difference(got: np.ndarray, want: np.ndarray) -> str:
    """Where two equal-length byte arrays first differ, for messages."""
    diff = np.flatnonzero(got != want)
    if diff.size == 0:
        return "no difference"
    i = int(diff[0])
    return (f"{diff.size} of {want.size} byte(s) differ, first at byte {i} "
            f"(read {int(got[i]):#04x}, expected {int(want[i]):#04x})")
