"""What a device hands the executor for one operator: :class:`PreparedCall`.

A device's ``tvmdevice_prepare_operator`` hook runs once, at compile time (the
TFLM "Prepare" step): it validates the operator against what its kernel can
do, computes multipliers, shifts, offsets and clamps, and returns a
:class:`PreparedCall`.  At run time the executor only dispatches.

**Buffer convention.** Every call receives its buffers in one fixed order:
the operator's inputs in operator order (``NULL``/``None`` where an optional
input is absent), then its outputs, then the scratch buffer if
``scratch_bytes > 0``.  A partition's call (:class:`tvmdevice.partition.Partition`)
receives the partition's inputs, then its outputs, then its scratch.  The
device handle (``resource_handle``) is never in that list: it is passed
separately, last.

**Two kernel kinds.**

* C: ``kernel`` is a ``PyCapsule`` named ``"tvmdevice.kernel"`` holding a
  ``tvmd_kernel_t`` (``kernel_abi.h``); ``params`` is an object whose
  ``capsule`` attribute is a ``PyCapsule`` named ``"tvmdevice.params"``
  pointing at the kernel's flat parameter struct.  Buffers are raw addresses
  (device addresses on devices with separate memory).
* Python: ``kernel`` is a callable ``kernel(params, buffers, device)``; on
  host-visible memory ``buffers`` are numpy views shaped and typed like the
  tensors (scratch as a flat uint8 view).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PreparedCall", "is_c_kernel"]


@dataclass(frozen=True)
class PreparedCall:
    """One prepared operator call on one device.

    :param name: kernel name shown in placement reports and traces.
    :param kernel: a ``"tvmdevice.kernel"`` capsule or a Python callable.
    :param params: the kernel's prepared parameters (kept alive by the executor).
    :param scratch_bytes: scratch the call needs; it is a buffer of the memory
        plan (in the device's pool, alive during the call) and is passed as the
        last buffer.
    :param details: figures the device reports for this call (a compiler's estimated cycles, the
        memory it uses, MACs...): plain JSON values, shown by ``tvmdevice info`` and in its ``--json``.
    :param in_scratch: inputs and outputs the call addresses inside its scratch: position in the call's
        buffer list (inputs, then outputs) -> byte offset in the scratch.  For a device whose compiler
        plans the call's tensors inside its own working area (Vela places a partition's inputs and
        outputs in its scratch arena).  The memory plan then places that tensor's host buffer there
        (the scratch stays alive over the tensor's whole lifetime), so nothing is copied.  A tensor the
        plan cannot place there keeps a buffer of its own: a graph input or output the caller binds, a
        state, a tensor of another memory, one another call already places, or one that would overlap
        a tensor placed before it.  The kernel must therefore compare addresses and copy when they
        differ.
    """

    name: str
    kernel: Any
    params: Any = None
    scratch_bytes: int = 0
    details: Mapping[str, Any] = field(default_factory=dict)
    in_scratch: Mapping[int, int] = field(default_factory=dict)


def is_c_kernel(kernel: Any) -> bool:
    """True when ``kernel`` is a C kernel capsule rather than a Python callable."""
    return type(kernel).__name__ == "PyCapsule"

