"""The host device's prepare: an operator's C kernel capsule and its params struct.

The op data is TFLM's Prepare, computed once by :func:`tvmdevice.ops.analyze`.
The operator's kernel key (:func:`tvmdevice.ops.kernel_key`) selects its
entry of :data:`~tvmdevice.host.kernel_table.KERNELS`; that entry's step of
:mod:`tvmdevice.host.prepare` adds the members the C loops need in their own
form (and may name the kernel the op data calls for), and the
kernel's params struct is filled from the op data by member name.  The
kernels are the portable C99 of ``tvmdevice/host/csrc``, called through the
kernel ABI like any plugin's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tvmdevice import ops
from tvmdevice.errors import Refusal
from tvmdevice.host._kernels import kernel_capsule
from tvmdevice.host.kernel_table import KERNEL_BY_KEY, KERNEL_BY_NAME, KERNELS, OPERATORS
from tvmdevice.host.prepare._common import KernelPlan
from tvmdevice.kernel import PreparedCall
from tvmdevice.params import ParamsStruct

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator

__all__ = ["prepare", "OPERATORS"]

_INDEX = {k.name: i for i, k in enumerate(KERNELS)}
_OP_TYPES = frozenset(key.split(":")[0] for key in OPERATORS)


def prepare(graph: "Graph", op: "Operator", op_data: ops.OpData | None = None) -> PreparedCall:
    """The host device's call for ``op``: a C kernel capsule and its params struct.

    :param op_data: the operator's :func:`tvmdevice.ops.analyze` result;
        computed here when not given.
    :raises Refusal: for an operator type the host does not implement,
        parameters TFLM's int8 kernels do not support, or the host's own
        limits (the message names the operator).
    :raises ModelFormatError: for a malformed operator.
    """
    if op_data is None and op.type in _OP_TYPES:
        op_data = ops.analyze(graph, op)
    key = ops.kernel_key(op.type, op_data)
    entry = KERNEL_BY_KEY.get(key)
    if entry is None:
        raise Refusal(f"no host kernel for {key}; the host implements {', '.join(sorted(OPERATORS))}",
                      op=op, device="c")
    step = entry.prepare_step()
    plan = step(graph, op, op_data) if step is not None else KernelPlan()
    kernel = KERNEL_BY_NAME[plan.kernel] if plan.kernel is not None else entry
    return PreparedCall(name=kernel.name, kernel=kernel_capsule(_INDEX[kernel.name]),
                        params=ParamsStruct(kernel.layout, op_data, **plan.values), scratch_bytes=plan.scratch_bytes)
