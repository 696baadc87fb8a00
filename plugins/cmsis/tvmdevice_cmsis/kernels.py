"""Prepare cmsis-nn kernel calls and run them on numpy arrays.

* :func:`prepare` -- the ``tvmdevice_prepare_operator`` step: validate an
  operator of a graph and return a :class:`tvmdevice.PreparedCall` holding the
  kernel capsule, the params object and the scratch size.
* :func:`run` -- call one prepared kernel on numpy arrays (the Python form of
  a C kernel, for tests): every array is checked against the call's buffer
  specs before C sees its address.
* :func:`check_buffers` -- that check alone (used by the graph runner).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from tvmdevice.errors import InvalidArgumentError, error_for_status
from tvmdevice.kernel import PreparedCall
from tvmdevice.memory import address_of, aligned_empty

from . import _kernels, ops

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.aot.ir import Graph, Operator
    from tvmdevice.device import Device

__all__ = ["prepare", "run", "check_buffers", "check_device", "SCRATCH_ALIGNMENT"]

SCRATCH_ALIGNMENT = 64


def prepare(graph: "Graph", op: "Operator") -> PreparedCall:
    """Validate ``op`` and prepare its cmsis-nn kernel call.

    :raises NotSupportedError: the kernels cannot run this operator.
    :raises InvalidArgumentError: the operator's tensors are inconsistent.
    """
    spec = ops.analyze(graph, op)
    params = _kernels.make_params(spec)
    return PreparedCall(name=spec.name, kernel=_kernels.kernel_capsule(spec.kind), params=params,
                        scratch_bytes=int(params.scratch_bytes))


def _params_of(prepared: PreparedCall) -> "_kernels.Params":
    params = prepared.params
    if not isinstance(params, _kernels.Params):
        raise InvalidArgumentError(f"{prepared.name}: not a cmsis-nn prepared call (params are "
                                   f"{type(params).__name__})")
    return params


def check_buffers(prepared: PreparedCall, arrays: Sequence[Any]) -> list[int | None]:
    """Check ``arrays`` against the call's buffer specs; return their addresses.

    Each array must be a C-contiguous, aligned numpy array of the tensor's
    dtype and element count (its shape may differ: a flat buffer is fine);
    absent optional inputs must be ``None``; outputs must be writeable and
    must not overlap any input.

    :raises InvalidArgumentError: naming the first buffer that does not fit.
    """
    params = _params_of(prepared)
    specs = params.buffers
    if len(arrays) != len(specs):
        raise InvalidArgumentError(f"{prepared.name}: expected {len(specs)} buffers "
                                   f"({', '.join(s.role for s in specs)}), got {len(arrays)}")
    addresses: list[int | None] = []
    for spec, array in zip(specs, arrays):
        what = f"{prepared.name}: {spec.role} buffer"
        if spec.absent:
            if array is not None:
                raise InvalidArgumentError(f"{what} must be None: the operator has no {spec.role}")
            addresses.append(None)
            continue
        if not isinstance(array, np.ndarray):
            raise InvalidArgumentError(f"{what} must be a numpy array, got {type(array).__name__}")
        if array.dtype != np.dtype(spec.dtype):
            raise InvalidArgumentError(f"{what} must be {spec.dtype}, got {array.dtype}")
        if array.size != spec.size:
            raise InvalidArgumentError(f"{what} must hold {spec.size} values (shape {list(spec.shape)}), "
                                       f"got {array.size} (shape {list(array.shape)})")
        if not (array.flags.c_contiguous and array.flags.aligned):
            raise InvalidArgumentError(f"{what} must be C-contiguous and aligned")
        if spec.output and not array.flags.writeable:
            raise InvalidArgumentError(f"{what} is read-only")
        addresses.append(address_of(array))
    outputs = [a for s, a in zip(specs, arrays) if s.output]
    inputs = [a for s, a in zip(specs, arrays) if not s.output and a is not None]
    for out in outputs:
        if any(np.may_share_memory(out, a) for a in inputs):
            raise InvalidArgumentError(f"{prepared.name}: the output buffer overlaps an input buffer")
    return addresses


def check_device(device: "Device | None") -> int:
    """The ``resource_handle`` for ``device``: its struct address, 0 for none.

    :raises InvalidArgumentError: ``device`` is not a cmsis-nn device (its
        struct would be misread by the kernels).
    """
    if device is None:
        return 0
    if getattr(getattr(device, "type", None), "name", None) != "cmsis-nn":
        raise InvalidArgumentError(f"cmsis-nn kernels need a cmsis-nn device, got {device!r}")
    return int(device.handle_address)


def run(prepared: PreparedCall, arrays: Sequence[Any], device: "Device | None" = None,
        scratch: np.ndarray | None = None) -> None:
    """Run one prepared kernel on numpy arrays.

    :param prepared: a call from :func:`prepare`.
    :param arrays: the operator's inputs (``None`` for an absent bias), then
        its output, which is written in place.
    :param device: the cmsis-nn device to run on (its struct is the
        ``resource_handle``; it must be active and its workspace provides
        the scratch), or ``None`` to run the kernel standalone.
    :param scratch: scratch memory to use instead (at least
        ``prepared.scratch_bytes`` bytes, uint8, C-contiguous).
    :raises InvalidArgumentError: a buffer does not fit the call.
    :raises LifecycleError: the device is not active.
    """
    addresses = check_buffers(prepared, arrays)
    handle = check_device(device)
    need = prepared.scratch_bytes
    workspace = None
    if need:
        if scratch is not None:
            if not (isinstance(scratch, np.ndarray) and scratch.dtype == np.uint8 and scratch.flags.c_contiguous
                    and scratch.flags.writeable and scratch.nbytes >= need):
                raise InvalidArgumentError(f"{prepared.name}: scratch must be a writeable, C-contiguous uint8 "
                                           f"array of at least {need} bytes")
            addresses.append(address_of(scratch))
        elif device is not None and device.state.value in ("opened", "active"):
            workspace = device.alloc_workspace(need)
            addresses.append(workspace)
        else:
            scratch = aligned_empty(need, SCRATCH_ALIGNMENT, zero=False)
            addresses.append(address_of(scratch))
    try:
        status = _invoke(prepared, addresses, handle)
    finally:
        if workspace is not None:
            device.free_workspace(workspace)
    if status:
        raise error_for_status(status, f"{prepared.name} returned status {status}")


def _invoke(prepared: PreparedCall, addresses: list[int | None], handle: int) -> int:
    from tvmdevice._abi import invoke_kernel

    return invoke_kernel(prepared.kernel, prepared.params, addresses, handle)
