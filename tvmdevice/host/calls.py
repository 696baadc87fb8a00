"""The host device's prepare step: each operator's C kernel and its params struct.

The op data is TFLM's Prepare, computed once by :func:`tvmdevice.ops.analyze`;
here each operator picks its kernel of :data:`~tvmdevice.host.kernel_table.KERNELS`
and fills that kernel's params struct from the op data by member name, adding
only what the C loops need in their own form (shapes right-aligned to a fixed
rank, arrays padded to their C length).  The kernels are the portable C99 of
``tvmdevice/host/csrc``, called through the kernel ABI like any plugin's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from tvmdevice import ops
from tvmdevice.errors import Refusal
from tvmdevice.host import shape_calls
from tvmdevice.host._kernels import kernel_capsule
from tvmdevice.host.arith_calls import PLANS as ARITH_PLANS
from tvmdevice.host.kernel_table import KERNEL_BY_NAME, KERNELS, MAX_CONCAT_INPUTS, MAX_DIMS, MEAN_DIMS, PAD_DIMS
from tvmdevice.host.limits import check_pool_windows, check_window_coordinates
from tvmdevice.kernel import PreparedCall
from tvmdevice.params import ParamsStruct

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator

__all__ = ["prepare", "OPERATORS"]

_INDEX = {k.name: i for i, k in enumerate(KERNELS)}

#: (kernel name, extra members) for one operator.
_Plan = tuple[str, dict[str, Any]]


def _right_aligned(values: tuple[int, ...], rank: int, fill: int) -> tuple[int, ...]:
    return (fill,) * (rank - len(values)) + tuple(values)


def _conv(graph: "Graph", op: "Operator", d: ops.ConvData) -> _Plan:
    check_window_coordinates(d)
    return ("depthwise_conv2d_s8" if d.depthwise else "conv2d_s8"), {}


def _fully_connected(graph: "Graph", op: "Operator", d: ops.FullyConnectedData) -> _Plan:
    if d.per_channel:
        return "fully_connected_s8", {"quant_stride": 1}
    # Per-tensor weights: one multiplier and shift, not out_ch copies (flash in an export).
    return "fully_connected_s8", {"quant_stride": 0, "multiplier": d.multiplier[:1], "shift": d.shift[:1]}


def _pool(graph: "Graph", op: "Operator", d: ops.PoolData) -> _Plan:
    check_window_coordinates(d)
    check_pool_windows(d)
    return ("avg_pool2d_s8" if d.average else "max_pool2d_s8"), {}


def _softmax(graph: "Graph", op: "Operator", d: ops.SoftmaxData) -> _Plan:
    return "softmax_s8", {}


def _elementwise(graph: "Graph", op: "Operator", d: ops.ElementwiseData) -> _Plan:
    if d.broadcasts:
        shape, s1, s2 = d.broadcast_strides(MAX_DIMS)
    else:  # one flat row, whatever the rank
        shape, s1, s2 = (_right_aligned((d.size,), MAX_DIMS, 1), _right_aligned((1,), MAX_DIMS, 0),
                         _right_aligned((1,), MAX_DIMS, 0))
    return ("add_s8" if d.op_type == "ADD" else "mul_s8"), {"out_shape": shape, "in1_strides": s1,
                                                            "in2_strides": s2}


def _pad(graph: "Graph", op: "Operator", d: ops.PadData) -> _Plan:
    if d.itemsize != 1:
        return shape_calls.pad_any(graph, op, d)
    return "pad_s8", {"in_shape": _right_aligned(d.in_shape, PAD_DIMS, 1),
                      "out_shape": _right_aligned(d.out_shape, PAD_DIMS, 1),
                      "before": _right_aligned(tuple(a for a, _ in d.paddings), PAD_DIMS, 0)}


def _concatenation(graph: "Graph", op: "Operator", d: ops.ConcatData) -> _Plan:
    if graph.tensors[op.outputs[0]].dtype.itemsize != 1:
        return shape_calls.join(graph, op, d)
    return "concatenation_s8", {"copy_sizes": d.copy_sizes + (0,) * (MAX_CONCAT_INPUTS - d.inputs_count)}


def _mean(graph: "Graph", op: "Operator", d: ops.MeanData) -> _Plan:
    lead = MEAN_DIMS - len(d.in_shape)
    return "mean_s8", {"shape": _right_aligned(d.in_shape, MEAN_DIMS, 1),
                       "reduced": tuple(int(k - lead in d.axes) for k in range(MEAN_DIMS))}


def _quantize(graph: "Graph", op: "Operator", d: ops.QuantizeData) -> _Plan:
    return ("quantize_f32_s8" if d.from_float else "requantize_s8"), {}


def _dequantize(graph: "Graph", op: "Operator", d: ops.DequantizeData) -> _Plan:
    return "dequantize_s8_f32", {}


def _activation(graph: "Graph", op: "Operator", d: ops.ActivationData) -> _Plan:
    return ("logistic_s8" if d.op_type == "LOGISTIC" else "tanh_s8"), {}


def _reshape(graph: "Graph", op: "Operator", d: ops.ViewData) -> _Plan:
    # Placement aliases a reshape of a computed tensor; a constant's is copied.
    src, dst = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if src.nbytes != dst.nbytes:
        raise Refusal(f"RESHAPE of {src.nbytes} bytes into {dst.nbytes}", op=op, device="c")
    return "reshape", {"num_inputs": len(op.inputs), "nbytes": dst.nbytes}


def _lstm(graph: "Graph", op: "Operator", d: ops.LstmData) -> _Plan:
    return f"lstm_s{d.activation_bits}", {}


def _svdf(graph: "Graph", op: "Operator", d: ops.SvdfData) -> _Plan:
    return f"svdf_s8_s{d.state_bits}", {}


#: Scratch a kernel needs beyond its operands: TFLM's scratch buffers, planned with the rest of memory.
_SCRATCH: dict[str, Callable[[Any], int]] = {
    "UNIDIRECTIONAL_SEQUENCE_LSTM": lambda d: 2 * d.scratch_elements,
    "SVDF": lambda d: d.scratch_bytes,
}

_PLANS: dict[str, Callable[..., _Plan]] = {
    "CONV_2D": _conv, "DEPTHWISE_CONV_2D": _conv, "FULLY_CONNECTED": _fully_connected,
    "AVERAGE_POOL_2D": _pool, "MAX_POOL_2D": _pool, "SOFTMAX": _softmax, "ADD": _elementwise, "MUL": _elementwise,
    "PAD": _pad, "CONCATENATION": _concatenation, "MEAN": _mean, "QUANTIZE": _quantize, "DEQUANTIZE": _dequantize,
    "LOGISTIC": _activation, "TANH": _activation, "RESHAPE": _reshape, "SQUEEZE": _reshape, "EXPAND_DIMS": _reshape,
    **shape_calls.PLANS,
    **ARITH_PLANS,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": _lstm, "SVDF": _svdf,
}

# The int16x8 variants and SUB, by kernel key ("ADD:int16").
from tvmdevice.host.calls_int16 import PLANS as _INT16_PLANS  # noqa: E402

_PLANS.update(_INT16_PLANS)

#: Kernel keys (:func:`tvmdevice.ops.kernel_key`) the host's C kernels run.
OPERATORS: frozenset[str] = frozenset(_PLANS)
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
    plan = _PLANS.get(key)
    if plan is None:
        raise Refusal(f"no host kernel for {key}; the host implements {', '.join(sorted(OPERATORS))}",
                      op=op, device="c")
    name, extras = plan(graph, op, op_data)
    kernel = KERNEL_BY_NAME[name]
    scratch = _SCRATCH.get(op.type)
    return PreparedCall(name=name, kernel=kernel_capsule(_INDEX[name]),
                        params=ParamsStruct(kernel.layout, op_data, **extras),
                        scratch_bytes=scratch(op_data) if scratch is not None else 0)
