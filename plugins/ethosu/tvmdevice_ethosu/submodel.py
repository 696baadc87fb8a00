"""Write some operators of a graph back as a TFLite model: what Vela compiles.

Vela takes TFLite files.  A partition (or one operator, to ask Vela whether it
places it on the NPU) is written as a model of its own: its operators with
their options, the constant tensors they read with their data, and the
partition's inputs and outputs as the model's.  The options are written back
from the decoded ``Operator.options`` into the schema's tables; an operator
whose options this writer cannot express is refused with
:class:`NotExpressible`, never written with guessed options.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator

__all__ = ["NotExpressible", "write_model"]


class NotExpressible(ValueError):
    """An operator this writer cannot hand to Vela (its options or a tensor type)."""


def _activation(value: str) -> int:
    import tflite

    return int(getattr(tflite.ActivationFunctionType, value))


def _padding(value: str) -> int:
    import tflite

    return int(getattr(tflite.Padding, value))


def _conv(o: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "Conv2DOptions", {"Padding": _padding(o["padding"]), "StrideW": o["stride_w"], "StrideH": o["stride_h"],
                             "DilationWFactor": o["dilation_w_factor"], "DilationHFactor": o["dilation_h_factor"],
                             "FusedActivationFunction": _activation(o["fused_activation"])}


def _depthwise(o: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    fields = _conv(o)[1]
    fields["DepthMultiplier"] = o["depth_multiplier"]
    return "DepthwiseConv2DOptions", fields


def _pool(o: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "Pool2DOptions", {"Padding": _padding(o["padding"]), "StrideW": o["stride_w"], "StrideH": o["stride_h"],
                             "FilterWidth": o["filter_width"], "FilterHeight": o["filter_height"],
                             "FusedActivationFunction": _activation(o["fused_activation"])}


def _activation_only(table: str) -> Callable[[dict[str, Any]], tuple[str, dict[str, Any]]]:
    return lambda o: (table, {"FusedActivationFunction": _activation(o["fused_activation"])})


def _reshape(o: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    return None if o.get("new_shape") is None else ("ReshapeOptions", {"NewShape": list(o["new_shape"])})


#: Op type -> writer of its options table (from the decoded options).  Operator types the frontend decodes
#: no options for are written without a table; any other type is not expressible.
_OPTIONS: dict[str, Callable[[dict[str, Any]], tuple[str, dict[str, Any]] | None]] = {
    "CONV_2D": _conv,
    "DEPTHWISE_CONV_2D": _depthwise,
    "FULLY_CONNECTED": lambda o: ("FullyConnectedOptions", {
        "FusedActivationFunction": _activation(o["fused_activation"]), "KeepNumDims": bool(o["keep_num_dims"])}),
    "AVERAGE_POOL_2D": _pool,
    "MAX_POOL_2D": _pool,
    "SOFTMAX": lambda o: ("SoftmaxOptions", {"Beta": float(o["beta"])}),
    "ADD": _activation_only("AddOptions"),
    "MUL": _activation_only("MulOptions"),
    "SUB": _activation_only("SubOptions"),
    "CONCATENATION": lambda o: ("ConcatenationOptions", {
        "Axis": o["axis"], "FusedActivationFunction": _activation(o["fused_activation"])}),
    "RESHAPE": _reshape,
    "MEAN": lambda o: ("ReducerOptions", {"KeepDims": bool(o["keep_dims"])}),
    "LEAKY_RELU": lambda o: ("LeakyReluOptions", {"Alpha": float(o["alpha"])}),
}


def _options(op: "Operator") -> tuple[str, dict[str, Any]] | None:
    write = _OPTIONS.get(op.type)
    if write is not None:
        return write(op.options)
    if op.options:
        raise NotExpressible(f"{op.type}'s options cannot be written for Vela")
    return None


def _tensor_type(dtype: np.dtype) -> int:
    import tflite

    name = np.dtype(dtype).name.upper()
    code = getattr(tflite.TensorType, name, None)
    if code is None:
        raise NotExpressible(f"tensor type {np.dtype(dtype).name} cannot be written for Vela")
    return int(code)


def write_model(graph: "Graph", ops: Sequence["Operator"], inputs: Sequence[int], outputs: Sequence[int]) -> bytes:
    """A TFLite model of ``ops`` (in order) whose inputs and outputs are the tensors ``inputs``, ``outputs``.

    :raises NotExpressible: for an operator or tensor this writer cannot express.
    """
    import tflite
    from tvmdevice.aot.builder import ModelSpec, OperatorSpec, TensorSpec, serialize
    from tvmdevice.ir import ABSENT

    spec = ModelSpec(name=graph.name, description="tvmdevice ethos-u partition")
    index: dict[int, int] = {}

    def tensor(t: int) -> int:
        if t == ABSENT:
            return -1
        if t not in index:
            src = graph.tensors[t]
            buffer = 0
            if src.is_constant:
                spec.buffers.append(np.ascontiguousarray(src.data).tobytes())
                buffer = len(spec.buffers) - 1
            q = src.quant
            spec.tensors.append(TensorSpec(
                src.name or f"t{t}", tuple(int(d) for d in src.shape), _tensor_type(src.dtype), buffer,
                None if q is None else [float(s) for s in q.scale],
                None if q is None else [int(z) for z in q.zero_point], 0 if q is None else int(q.axis)))
            index[t] = len(spec.tensors) - 1
        return index[t]

    spec.inputs = [tensor(t) for t in inputs]
    for op in ops:
        code = getattr(tflite.BuiltinOperator, op.type, None)
        if code is None:
            raise NotExpressible(f"{op.type} is no TFLite builtin operator")
        spec.operators.append(OperatorSpec(int(code), tuple(tensor(t) for t in op.inputs),
                                           tuple(tensor(t) for t in op.outputs), _options(op)))
    spec.outputs = [tensor(t) for t in outputs]
    return serialize(spec)
