"""What the woofles NPU adds to the operator layer's op data: its limits and its params structs.

The op data (TFLM's Prepare: zero points, multipliers and shifts, activation
range, padding, broadcast shapes) comes from :func:`tvmdevice.ops.analyze`,
computed once per operator by the pipeline and shared by every device.  Each
family module here checks the NPU's own limits (the declared target options,
the address generator's rank) and fills the kernel's params struct from the
op data by member name; :func:`prepare` adds the SRAM fit.  A limit exceeded
is a :class:`~tvmdevice.errors.Refusal` naming it, so placement runs the
operator on the next device.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvmdevice.errors import Refusal
from tvmdevice.ir import Graph, Operator
from tvmdevice.kernel import PreparedCall
from tvmdevice.ops import OpData, analyze
from tvmdevice.params import ParamsStruct

from . import add, conv, fully_connected, minmax, pad, pooling, transpose_conv
from .limits import check_fits_sram

__all__ = ["prepare", "PACKERS"]

#: Operator type -> packer: ``(op data, options, operator) -> (kernel name, params)``; a packer
#: handles the int8 operator and the int16 variants ``device.OPERATORS`` declares for it (a test
#: holds the operator types equal).
PACKERS: dict[str, Callable[[Any, dict[str, Any], Operator], tuple[str, ParamsStruct]]] = {
    "CONV_2D": conv.pack,
    "DEPTHWISE_CONV_2D": conv.pack,
    "FULLY_CONNECTED": fully_connected.pack,
    "AVERAGE_POOL_2D": pooling.pack,
    "MAX_POOL_2D": pooling.pack,
    "ADD": add.pack,
    "MAXIMUM": minmax.pack,
    "MINIMUM": minmax.pack,
    "TRANSPOSE_CONV": transpose_conv.pack,
    "PAD": pad.pack,
    "PADV2": pad.pack,
}


def prepare(graph: Graph, op: Operator, op_data: OpData | None, options: dict[str, Any]) -> PreparedCall:
    """A :class:`PreparedCall` running ``op`` on the NPU.

    :param op_data: the operator layer's op data; ``None`` from a caller that
        did not analyze the operator (it is analyzed here then).
    :raises Refusal: the NPU cannot run it; the reason names the limit.
    """
    from .. import _woofles  # the compiled extension; imported only when compiling a model

    packer = PACKERS.get(op.type)
    if packer is None:
        raise Refusal(f"the woofles NPU has no {op.type} unit (it runs {', '.join(sorted(PACKERS))})")
    data = analyze(graph, op) if op_data is None else op_data
    kernel, params = packer(data, options, op)
    check_fits_sram(graph, op, options)
    return PreparedCall(name=kernel, kernel=_woofles.kernel_capsule(kernel), params=params)
