"""Operator analysis: from a graph operator to a validated :class:`KernelSpec`.

Pure Python (numpy and the core only), so ``tvmdevice_check_operator`` can
answer without loading the compiled kernels.  Every bound a C kernel relies
on is checked here; the compiled extension only copies the result into C
structs (:func:`tvmdevice_cmsis._kernels.make_params`).
"""

from __future__ import annotations

from typing import Callable

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.errors import InvalidArgumentError, NotSupportedError

from ._common import BufferSpec, KernelSpec
from .conv import analyze_conv, analyze_depthwise
from .elementwise import analyze_elementwise
from .fully_connected import analyze_fully_connected
from .pooling import analyze_pool
from .softmax import analyze_softmax

__all__ = ["BufferSpec", "KernelSpec", "ANALYSES", "analyze", "refusal"]

#: TFLite operator name -> its analysis.
ANALYSES: dict[str, Callable[[Graph, Operator], KernelSpec]] = {
    "CONV_2D": analyze_conv,
    "DEPTHWISE_CONV_2D": analyze_depthwise,
    "FULLY_CONNECTED": analyze_fully_connected,
    "AVERAGE_POOL_2D": analyze_pool,
    "MAX_POOL_2D": analyze_pool,
    "SOFTMAX": analyze_softmax,
    "ADD": analyze_elementwise,
    "MUL": analyze_elementwise,
}


def analyze(graph: Graph, op: Operator) -> KernelSpec:
    """Validate ``op`` for the cmsis-nn kernels and compute its parameters.

    :raises NotSupportedError: the operator or one of its parameters is not
        something the kernels do.
    :raises InvalidArgumentError: the operator's tensors are inconsistent.
    """
    analysis = ANALYSES.get(op.type)
    if analysis is None:
        raise NotSupportedError(f"cmsis-nn has no {op.type} kernel")
    try:
        return analysis(graph, op)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        if isinstance(exc, InvalidArgumentError):
            raise
        # A malformed operator (missing option, odd tensor data) never
        # escapes as a bare Python error.
        raise InvalidArgumentError(f"cmsis-nn: operator {op.index} ({op.type}): "
                                   f"{type(exc).__name__}: {exc}") from None


def refusal(graph: Graph, op: Operator) -> str | None:
    """``None`` when the kernels can run ``op``, else the reason they cannot."""
    try:
        analyze(graph, op)
    except (NotSupportedError, InvalidArgumentError) as exc:
        return str(exc)
    return None
