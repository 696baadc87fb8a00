"""One prepared cmsis-nn kernel call as standalone C data, for firmware tests and the MCU benchmark.

:func:`call_data` writes a call's buffers, its scratch and its params struct
(``params``, through :meth:`~tvmdevice.params.ParamsStruct.c_initializer`, so
the target compiler lays it out) as C definitions; a program then calls
``<kernel>(&params, buffers, device)``.
"""

from __future__ import annotations

from typing import Any, Collection, Sequence

import numpy as np
from tvmdevice.export.carrays import c_array

__all__ = ["call_data"]


def call_data(call: Any, arrays: Sequence[np.ndarray | None], writable: Collection[int] = ()) -> tuple[str, list[str]]:
    """C definitions of ``call``'s data and the expression of each kernel buffer.

    :param call: a cmsis-nn :class:`~tvmdevice.kernel.PreparedCall` (its params list the buffers).
    :param arrays: one array per kernel buffer, ``None`` for an absent one; outputs are writable.
    :param writable: indices of further buffers the kernel updates in place (variable tensors: a
        recurrent operator's state), defined writable rather than ``const``.
    :returns: the source (``b<k>`` arrays, ``scratch``, ``params``) and the buffer expressions in kernel
        order, scratch last when the call has one.
    """
    lines, buffers = [], []
    for k, (spec, array) in enumerate(zip(call.params.buffers, arrays)):
        if array is None:
            buffers.append("NULL")
            continue
        qualifiers = "static" if spec.output or k in writable else "static const"
        lines.append(c_array(f"b{k}", np.asarray(array), qualifiers=qualifiers))
        buffers.append(f"(void*)b{k}")
    if call.scratch_bytes:
        lines.append(f"static uint64_t scratch[{(call.scratch_bytes + 7) // 8}];\n")  # 8-aligned: int64 sums
        buffers.append("(void*)scratch")
    names = {}
    for path, value in call.params.pointer_arrays().items():
        names[path] = "p_" + path.replace(".", "_").replace("[", "_").replace("]", "")
        lines.append(c_array(names[path], np.asarray(value), qualifiers="static const"))
    lines.append(call.params.c_initializer("params", names))
    return "".join(lines), buffers
