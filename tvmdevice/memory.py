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
