"""The numpy reference kernels, bit-exact with TensorFlow Lite Micro: the tests' oracle.

No device runs them.  The ``c`` device runs its C kernels
(:mod:`tvmdevice.host.calls`); these are an independent implementation of
the same TFLM semantics, written with numpy (sharing nothing with the C), that
every device, the ``c`` device's C included, is checked against.

Each operator family lives in its own module exposing
``build(op_data) -> PreparedCall``: the op data is TFLM's Prepare, computed
once by :func:`tvmdevice.ops.analyze`; a reference kernel adds only its own packing
(tap counts, lookup tables) and limits.  The call's ``kernel`` is a Python
callable ``kernel(params, buffers, device)`` that writes its outputs into the
numpy views in ``buffers`` (convention in :mod:`tvmdevice.kernel`); kernels
only compute.

:func:`run_graph` runs a whole graph with plain numpy arrays: it is the
oracle other devices are checked against.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tvmdevice import ops
from tvmdevice.errors import Refusal
from tvmdevice.ir import ABSENT, Graph, Operator
from tvmdevice.kernel import PreparedCall
from tvmdevice.testing.reference import (
    activations,
    arith,
    conv,
    elementwise,
    fully_connected,
    int16,
    movement,
    pooling,
    quantize,
    recurrent,
    shape,
    softmax,
)

__all__ = ["SUPPORTED", "prepare", "run_graph"]

_BUILD: dict[str, Callable[[Any], PreparedCall]] = {
    "CONV_2D": conv.build,
    "DEPTHWISE_CONV_2D": conv.build,
    "FULLY_CONNECTED": fully_connected.build,
    "AVERAGE_POOL_2D": pooling.build,
    "MAX_POOL_2D": pooling.build,
    "SOFTMAX": softmax.build,
    "ADD": elementwise.build,
    "MUL": elementwise.build,
    "RESHAPE": shape.build,
    "PAD": shape.build,
    "CONCATENATION": shape.build,
    "MEAN": shape.build,
    "QUANTIZE": quantize.build,
    "DEQUANTIZE": quantize.build,
    "LOGISTIC": activations.build,
    "TANH": activations.build,
    "SQUEEZE": shape.build,
    "EXPAND_DIMS": shape.build,
    **{t: movement.build for t in ("TRANSPOSE", "SLICE", "STRIDED_SLICE", "BROADCAST_TO", "SPLIT", "SPLIT_V",
                                   "UNPACK", "PACK", "GATHER", "PADV2", "RESIZE_NEAREST_NEIGHBOR",
                                   "RESIZE_BILINEAR")},
    **arith.BUILD,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": recurrent.build,
    "SVDF": recurrent.build,
}

# The int16x8 variants and SUB, by kernel key ("ADD:int16").
_BUILD.update(int16.BUILD)

#: Kernel keys (:func:`tvmdevice.ops.kernel_key`) the host reference implements.
SUPPORTED: frozenset[str] = frozenset(_BUILD)
_OP_TYPES = frozenset(key.split(":")[0] for key in SUPPORTED)


def prepare(graph: Graph, op: Operator, op_data: ops.OpData | None = None) -> PreparedCall:
    """The host call for ``op`` from its op data.

    :param op_data: the operator's :func:`tvmdevice.ops.analyze` result;
        computed here when not given.
    :raises Refusal: for an operator type the host reference does not
        implement, parameters TFLM's int8 kernels do not support, or the
        host's own limits (the message names the operator).
    :raises ModelFormatError: for a malformed operator.
    """
    if op_data is None and op.type in _OP_TYPES:
        op_data = ops.analyze(graph, op)
    key = ops.kernel_key(op.type, op_data)
    build = _BUILD.get(key)
    if build is None:
        raise Refusal(f"no host reference kernel for {key}; the host implements "
                      f"{', '.join(sorted(SUPPORTED))}", op=op, device="c")
    return build(op_data)


def run_graph(graph: Graph, inputs: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
    """Run ``graph`` operator by operator with a fresh numpy array per tensor.

    :param inputs: one array per graph input, in ``graph.inputs`` order; each
        is converted to the tensor's dtype and must have its shape.
    :returns: every tensor of the graph (constants, inputs, intermediates,
        outputs) by tensor index; variable tensors (operator state) start
        from their reset value and hold the state after the run.
    """
    if len(inputs) != len(graph.inputs):
        raise ValueError(f"graph {graph.name!r} has {len(graph.inputs)} inputs, {len(inputs)} given")
    calls = [prepare(graph, op) for op in graph.operators]
    values: dict[int, np.ndarray] = {t.index: t.data for t in graph.tensors if t.data is not None}
    values.update({t.index: np.full(t.shape, t.reset_value, dtype=t.dtype) for t in graph.tensors if t.is_variable})
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

