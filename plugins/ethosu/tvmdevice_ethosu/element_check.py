"""Per-element operators whose NPU arithmetic is checked on every int8 input before they are placed.

Vela lowers LOGISTIC, TANH, HARD_SWISH and LEAKY_RELU to a 256-entry table it computes in floating
point (``ConvertToLUT8`` in ``tflite_graph_optimiser.cpp``), and PRELU to MULs with single-precision
scales and a MAXIMUM or an ADD (``ConvertPrelu``); tflite-micro computes them in fixed point with
double-precision multipliers.  The two agree for most quantizations, not all (measured: LOGISTIC
with input scale 2^-7 and zero point 0, 2 of the 256 inputs one step apart; PRELU from scale
0.0078125 to 0.05 with alpha scale 0.002, 12 of 768).

Each output element of these operators depends only on the input element at the same position and
on constants along the channel axis, so the operator is checked exhaustively: the same operator on
an input of shape ``(1, 256, 1, channels)`` holding every int8 value in every channel is compiled by
Vela and run on the functional model, and compared with the numpy reference kernels bit-exact with
tflite-micro (:func:`tvmdevice.testing.reference.run_graph`, tflite-micro's semantics).  Where any
element differs the device declines the operator, naming the first input.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tvmdevice.ir import Graph, Operator

__all__ = ["PER_ELEMENT", "element_refusal"]

#: The operators checked on every input (per element, int8, with channel-wise constants at most).
PER_ELEMENT = frozenset({"LOGISTIC", "TANH", "HARD_SWISH", "LEAKY_RELU", "PRELU"})

_VALUES = np.arange(-128, 128, dtype=np.int8)


def _exhaustive_graph(graph: "Graph", op: "Operator", src: int, dst: int) -> "Graph | None":
    """``op`` alone on every int8 value in every channel; None when its constants vary along another axis."""
    from tvmdevice.ir import Graph, Operator

    channels = int(graph.tensors[src].shape[-1]) if graph.tensors[src].shape else 1
    for t in op.inputs:
        tensor = graph.tensors[t] if t >= 0 else None
        if tensor is not None and tensor.is_constant and any(int(d) != 1 for d in tensor.shape[:-1]):
            return None
        if tensor is not None and tensor.is_constant and tensor.shape and int(tensor.shape[-1]) not in (1, channels):
            return None
    shape = (1, 256, 1, channels)
    tensors = list(graph.tensors)
    tensors[src] = dataclasses.replace(graph.tensors[src], shape=shape)
    tensors[dst] = dataclasses.replace(graph.tensors[dst], shape=shape)
    alone = Operator(op.index, op.type, op.inputs, op.outputs, dict(op.options))
    return Graph(graph.name, tensors, [alone], (src,), (dst,))


def _npu_outputs(model: bytes, options: dict[str, Any], x: np.ndarray) -> np.ndarray | None:
    """The functional model's output for ``x``; None when Vela or the model does not take the operator."""
    from . import _ethosu
    from .vela_compile import VelaError, compile_raw

    try:
        compiled, _ = compile_raw(model, options)
    except VelaError:
        return None  # the operator's own check says why
    regions = [np.frombuffer(bytes(compiled.read_only.data), np.uint8).copy(),
               np.zeros(compiled.scratch.size, np.uint8), np.zeros(max(compiled.scratch_fast.size, 1), np.uint8)]
    (src,), (dst,) = compiled.inputs, compiled.outputs
    regions[src.region][src.address:src.address + x.size] = x.reshape(-1).view(np.uint8)
    code = _ethosu.stream_run(np.frombuffer(bytes(compiled.command_stream), np.uint8), regions)[0]
    if code != _ethosu.STREAM_OK:
        return None
    return regions[dst.region][dst.address:dst.address + x.size].view(np.int8).reshape(x.shape)


def element_refusal(options: dict[str, Any], graph: "Graph", op: "Operator") -> str | None:
    """Why the NPU's ``op`` would not match tflite-micro's on some input (None when it matches everywhere,
    or for an operator this does not check)."""
    if op.type not in PER_ELEMENT or len(op.outputs) != 1:
        return None
    data = [t for t in op.inputs if t >= 0 and not graph.tensors[t].is_constant]
    if len(data) != 1 or np.dtype(graph.tensors[data[0]].dtype) != np.int8:
        return None
    alone = _exhaustive_graph(graph, op, data[0], op.outputs[0])
    if alone is None:
        return None
    from tvmdevice.testing.reference import run_graph

    from .submodel import NotExpressible, write_model

    x = np.ascontiguousarray(np.broadcast_to(_VALUES.reshape(1, 256, 1, 1), alone.tensors[data[0]].shape))
    try:
        model = write_model(alone, alone.operators, [data[0]], [op.outputs[0]])
    except NotExpressible:
        return None
    got = _npu_outputs(model, options, x)
    if got is None:
        return None
    want = run_graph(alone, [x])[op.outputs[0]]
    apart = np.argwhere(got != want)
    if not apart.size:
        return None
    i, c = int(apart[0][1]), int(apart[0][3])
    return (f"the NPU's arithmetic differs from tflite-micro's: Vela's {op.type} gives {int(got[0, i, 0, c])} for "
            f"the input {int(_VALUES[i])} (channel {c}), tflite-micro {int(want[0, i, 0, c])}; "
            f"{len(apart)} of {got.size} elements differ")
