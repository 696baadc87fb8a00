"""Shrinking a finding's file while the finding remains."""

from __future__ import annotations

import time
from typing import Callable


def minimize(data: bytes, still_fails: Callable[[bytes], bool], budget: float) -> bytes:
    """Greedy reduction while the finding remains: first zero chunks in place
    (halving in size; the length and so every flatbuffer offset stays valid),
    then drop chunks, which mostly trims data the offsets no longer reach."""
    deadline = time.monotonic() + budget
    for remove in (False, True):
        chunk = max(1, len(data) // 4)
        while chunk >= 1 and time.monotonic() < deadline:
            i, changed = 0, False
            while i < len(data) and time.monotonic() < deadline:
                piece = data[i:i + chunk]
                if not remove and not any(piece):
                    i += chunk
                    continue
                candidate = data[:i] + (b"" if remove else bytes(len(piece))) + data[i + chunk:]
                if candidate and still_fails(candidate):
                    data, changed = candidate, True
                    if not remove:
                        i += chunk
                else:
                    i += chunk
            if not changed:
                chunk //= 2
    return data
