"""Prepare cmsis-nn kernel calls and run them on numpy arrays.

* :func:`prepare` -- the ``tvmdevice_prepare_operator`` step: the operator's
  op data (:func:`tvmdevice.ops.analyze`) plus cmsis-nn's packing and limits
  (:data:`~tvmdevice_cmsis.kernel_table.KERNELS`), filled into the kernel's
  params struct by name; returns a :class:`tvmdevice.PreparedCall`.
* :func:`run` -- call one prepared kernel on numpy arrays (the Python form of
  a C kernel, for tests): every array is checked against the call's buffer
  specs before C sees its address.
* :func:`check_buffers` -- that check alone (used by the graph runner).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from tvmdevice.errors import InvalidArgumentError, NotSupportedError, Refusal, error_for_status
from tvmdevice.kernel import PreparedCall
from tvmdevice.layout import Layout
from tvmdevice.memory import address_of, aligned_empty
from tvmdevice.ops import OpData, analyze, kernel_key
from tvmdevice.params import ParamsStruct
from tvmdevice.plugin import invoke_kernel, params_address

from .kernel_table import ALL_KERNELS, KERNEL_BY_KIND, kernel_for, packing_for
from .ops._common import BufferSpec, KernelPlan, call_buffers

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.device import Device
    from tvmdevice.ir import Graph, Operator

__all__ = ["KernelParams", "prepare", "run", "check_buffers", "check_device", "SCRATCH_ALIGNMENT"]

SCRATCH_ALIGNMENT = 64
_DEVICE = "cmsis-nn"


class KernelParams(ParamsStruct):
    """A cmsis-nn kernel's filled params struct, with the buffers its call takes.

    :ivar buffers: the :class:`~tvmdevice_cmsis.ops._common.BufferSpec` of
        each buffer, in call order (inputs, outputs; scratch is not listed).
    """

    def __init__(self, layout: Layout, values: Any, buffers: tuple[BufferSpec, ...], **extras: Any) -> None:
        super().__init__(layout, values, **extras)
        self.buffers = buffers


@functools.cache
def _compiled():
    """The compiled extension, checked once against the kernel table it was built from."""
    from . import _kernels

    built = [_kernels.kernel_name(i) for i in range(_kernels.NUM_KERNELS)]
    declared = [k.symbol for k in ALL_KERNELS]
    if built != declared:
        raise NotSupportedError(f"{_DEVICE}: the compiled kernels {built} do not match the kernel table "
                                f"{declared}; rebuild tvmdevice-cmsis")
    return _kernels


def prepare(graph: "Graph", op: "Operator", op_data: OpData | None = None, *, mcpu: str = "") -> PreparedCall:
    """Prepare ``op``'s cmsis-nn kernel call.

    :param op_data: the operator's op data when the caller has it (the
        pipeline computes it once per operator); computed here otherwise.
    :param mcpu: the ``-mcpu`` target option: ``""`` packs the weights for
        the host running tvmdevice, a Cortex-M name packs them as CMSIS-NN
        takes them (:func:`~tvmdevice_cmsis.kernel_table.packing_for`).
    :raises Refusal: the operator layer or the kernels cannot run this
        operator (the reason says why).
    :raises ModelFormatError: the operator is malformed.
    :raises ValueError: ``mcpu`` is not a CPU cmsis-nn knows.
    """
    packing = packing_for(mcpu)
    data = analyze(graph, op) if op_data is None else op_data
    try:
        return _prepare(graph, op, data, packing)
    except Refusal as exc:
        raise exc.with_context(op=op, device=_DEVICE) from None


def _prepare(graph: "Graph", op: "Operator", data: OpData | None, packing: str) -> PreparedCall:
    kernel = None if data is None else kernel_for(kernel_key(op.type, data), packing)
    if kernel is None:
        variant = getattr(data, "variant", "")
        raise Refusal(f"{_DEVICE} has no {variant + ' ' if variant else ''}{op.type} kernel")
    step = kernel.prepare_step()
    plan = step(graph, op, data) if step else KernelPlan()
    runs = KERNEL_BY_KIND[plan.kind] if plan.kind else kernel
    params = KernelParams(runs.layout, data, call_buffers(graph, op),
                          **{**plan.values, "kind": runs.index})
    scratch = int(_compiled().scratch_bytes(runs.index, params_address(params)))
    return PreparedCall(name=runs.symbol, kernel=_compiled().kernel_capsule(runs.index), params=params,
                        scratch_bytes=scratch)


def _params_of(prepared: PreparedCall) -> KernelParams:
    params = prepared.params
    if not isinstance(params, KernelParams):
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
    specs = _params_of(prepared).buffers
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
    if getattr(getattr(device, "type", None), "name", None) != _DEVICE:
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
        status = invoke_kernel(prepared.kernel, prepared.params, addresses, handle)
    finally:
        if workspace is not None:
            device.free_workspace(workspace)
    if status:
        raise error_for_status(status, f"{prepared.name} returned status {status}")
