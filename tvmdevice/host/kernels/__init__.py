"""Host reference kernels: numpy, bit-exact with TensorFlow Lite Micro.

Each operator family lives in its own module exposing
``prepare(graph, op) -> PreparedCall``; the call's ``kernel`` is a Python
callable ``kernel(params, buffers, device)`` that writes its outputs into the
numpy views in ``buffers`` (convention in :mod:`tvmdevice.kernel`).  Prepare
validates the operator and computes every multiplier, shift and clamp once;
kernels only compute.

:func:`run_graph` runs a whole graph with plain numpy arrays: it is the
oracle other devices are checked against.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from tvmdevice.aot.frontend.errors import ModelFormatError, UnsupportedOperatorError
from tvmdevice.aot.ir import ABSENT, Graph, Operator
from tvmdevice.errors import ModelError
from tvmdevice.host.kernels import activations, conv, elementwise, fully_connected, pooling, quantize, shape, softmax
from tvmdevice.kernel import PreparedCall

__all__ = ["SUPPORTED", "prepare", "run_graph"]

_PREPARE: dict[str, Callable[[Graph, Operator], PreparedCall]] = {
    "CONV_2D": conv.prepare,
    "DEPTHWISE_CONV_2D": conv.prepare,
    "FULLY_CONNECTED": fully_connected.prepare,
    "AVERAGE_POOL_2D": pooling.prepare,
    "MAX_POOL_2D": pooling.prepare,
    "SOFTMAX": softmax.prepare,
    "ADD": elementwise.prepare,
    "MUL": elementwise.prepare,
    "RESHAPE": shape.prepare,
    "PAD": shape.prepare,
    "CONCATENATION": shape.prepare,
    "MEAN": shape.prepare,
    "QUANTIZE": quantize.prepare,
    "DEQUANTIZE": quantize.prepare,
    "LOGISTIC": activations.prepare,
    "TANH": activations.prepare,
}

#: Operator types the host reference implements.
SUPPORTED: frozenset[str] = frozenset(_PREPARE)


def prepare(graph: Graph, op: Operator) -> PreparedCall:
    """Validate ``op`` and compute its parameters (TFLM's Prepare step).

    :raises UnsupportedOperatorError: for an operator type or parameters the
        host reference does not implement (the message names the operator).
    :raises ModelFormatError: for inconsistent shapes or options.
    """
    fn = _PREPARE.get(op.type)
    if fn is None:
        raise UnsupportedOperatorError(
            f"operator {op.index} ({op.type}) is not supported by the host reference; "
            f"supported: {', '.join(sorted(SUPPORTED))}")
    try:
        for t in graph.op_inputs(op) + graph.op_outputs(op):
            if t is not None and 0 in t.shape:
                raise ModelFormatError(f"operator {op.index} ({op.type}): tensor {t.index} has an empty "
                                       f"shape {list(t.shape)}")
        return fn(graph, op)
    except ModelError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError, OverflowError) as e:
        # A hand-built or corrupted graph the checks above did not anticipate.
        raise ModelFormatError(f"operator {op.index} ({op.type}) is malformed: {type(e).__name__}: {e}") from None


def run_graph(graph: Graph, inputs: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
    """Run ``graph`` operator by operator with a fresh numpy array per tensor.

    :param inputs: one array per graph input, in ``graph.inputs`` order; each
        is converted to the tensor's dtype and must have its shape.
    :returns: every tensor of the graph (constants, inputs, intermediates,
        outputs) by tensor index.
    """
    if len(inputs) != len(graph.inputs):
        raise ValueError(f"graph {graph.name!r} has {len(graph.inputs)} inputs, {len(inputs)} given")
    calls = [prepare(graph, op) for op in graph.operators]
    values: dict[int, np.ndarray] = {t.index: t.data for t in graph.tensors if t.data is not None}
    for idx, array in zip(graph.inputs, inputs):
        t = graph.tensors[idx]
        array = np.asarray(array)
        if tuple(array.shape) != tuple(t.shape):
            raise ValueError(f"input tensor {idx} ({t.name!r}) needs shape {list(t.shape)}, got {list(array.shape)}")
        values[idx] = np.ascontiguousarray(array, dtype=t.dtype)
    for op, call in zip(graph.operators, calls):
        for idx in op.outputs:
            t = graph.tensors[idx]
            values[idx] = np.zeros(t.shape, dtype=t.dtype)
        buffers = [None if i == ABSENT else values[i] for i in op.inputs] + [values[i] for i in op.outputs]
        call.kernel(call.params, buffers, None)
    return values
