"""RESHAPE, PAD, CONCATENATION and MEAN, int8.

RESHAPE, PAD and CONCATENATION move values without rescaling, as TFLM does;
TFLite's quantization spec requires their inputs and outputs to share scale
and zero point, and a model that does not is refused rather than silently
reinterpreted.  PAD fills with the output zero point (TFLM's int8 PAD).

MEAN is TFLM's reference_ops::QuantizedMeanOrSum: int32 sum, minus
``zp_in * count``, requantized by ``s_in / s_out`` with ``1 / count`` folded
into the multiplier.  Current TFLM (the PyPI build these kernels are checked
against) uses it for every int8 MEAN; older releases had a 4-D spatial fast
path (reference_integer_ops::Mean) and a truncating path for equal
quantization, which round differently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.host.kernels import _common as c
from tvmdevice.kernel import PreparedCall
from tvmdevice.quantization import quantize_multiplier

__all__ = ["prepare", "PadParams", "ConcatParams", "MeanParams"]

_PAD_MAX_RANK = 5
_CONCAT_MAX_RANK = 4
_CONCAT_MAX_INPUTS = 10
_MEAN_MAX_RANK = 5
_MEAN_MAX_AXES = 2  # TFLM's resolved-axis scratch holds two entries


@dataclass(frozen=True)
class PadParams:
    """Prepared PAD parameters."""

    paddings: tuple[tuple[int, int], ...]
    pad_value: int


@dataclass(frozen=True)
class ConcatParams:
    """Prepared CONCATENATION parameters (non-negative axis)."""

    axis: int


@dataclass(frozen=True)
class MeanParams:
    """Prepared MEAN parameters (multiplier and shift already include 1/count)."""

    axes: tuple[int, ...]
    count: int
    input_zero_point: int
    output_zero_point: int
    multiplier: int
    shift: int


def prepare(graph: Graph, op: Operator) -> PreparedCall:
    """Validate a RESHAPE, PAD, CONCATENATION or MEAN operator."""
    return {"RESHAPE": _prepare_reshape, "PAD": _prepare_pad, "CONCATENATION": _prepare_concat,
            "MEAN": _prepare_mean}[op.type](graph, op)


def _prepare_reshape(graph: Graph, op: Operator) -> PreparedCall:
    (inp,), _, out = c.operands(graph, op, 1, 1)
    n_in, n_out = int(np.prod(inp.shape, dtype=np.int64)), int(np.prod(out.shape, dtype=np.int64))
    if n_in != n_out:
        raise c.malformed(op, f"cannot reshape {list(inp.shape)} ({n_in} elements) to {list(out.shape)}")
    c.require_same_quant(op, inp, out)
    return PreparedCall(name="reshape", kernel=run_reshape, params=None)


def run_reshape(params: None, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, shape or None, output]; a flat copy."""
    out = buffers[-1]
    out.reshape(-1)[...] = buffers[0].reshape(-1)


def _prepare_pad(graph: Graph, op: Operator) -> PreparedCall:
    (inp, pads), _, out = c.operands(graph, op, 2)
    rank = len(inp.shape)
    if rank > _PAD_MAX_RANK:
        raise c.unsupported(op, f"PAD supports up to {_PAD_MAX_RANK} dimensions, input has {rank}")
    if pads.data is None or tuple(pads.shape) != (rank, 2):
        raise c.malformed(op, f"paddings tensor {pads.index} must be a constant of shape [{rank}, 2]")
    paddings = tuple((int(a), int(b)) for a, b in pads.data.reshape(rank, 2))
    if any(a < 0 or b < 0 for a, b in paddings):
        raise c.malformed(op, f"negative paddings {paddings}")
    c.check_shape(op, out, [d + a + b for d, (a, b) in zip(inp.shape, paddings)], "output")
    c.require_same_quant(op, inp, out)
    _, out_zp = c.per_tensor(op, out, "output")
    return PreparedCall(name="pad_s8", kernel=run_pad, params=PadParams(paddings, out_zp))


def run_pad(params: PadParams, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, paddings, output]."""
    out = buffers[2]
    out[...] = params.pad_value
    inner = tuple(slice(a, a + d) for (a, _), d in zip(params.paddings, buffers[0].shape))
    out[inner] = buffers[0]


def _prepare_concat(graph: Graph, op: Operator) -> PreparedCall:
    first, rest, out = c.operands(graph, op, 1, _CONCAT_MAX_INPUTS - 1)
    ins = first + [t for t in rest if t is not None]
    if len(ins) != len(op.inputs):
        raise c.malformed(op, "an input is absent")
    rank = len(out.shape)
    if rank > _CONCAT_MAX_RANK or rank == 0:
        raise c.unsupported(op, f"CONCATENATION supports 1 to {_CONCAT_MAX_RANK} dimensions, output has {rank}")
    if op.options.get("fused_activation", "NONE") != "NONE":
        raise c.unsupported(op, "a fused activation on CONCATENATION is not supported (TFLM refuses it)")
    axis = int(op.options.get("axis", 0))
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        raise c.malformed(op, f"axis {op.options.get('axis')} is out of range for rank {rank}")
    for t in ins:
        if len(t.shape) != rank or any(t.shape[k] != out.shape[k] for k in range(rank) if k != axis):
            raise c.malformed(op, f"input tensor {t.index} shape {list(t.shape)} does not fit output "
                                  f"{list(out.shape)} along axis {axis}")
        c.require_same_quant(op, t, out)
    if sum(t.shape[axis] for t in ins) != out.shape[axis]:
        raise c.malformed(op, f"input sizes along axis {axis} do not add up to {out.shape[axis]}")
    return PreparedCall(name="concatenation", kernel=run_concat, params=ConcatParams(axis))


def run_concat(params: ConcatParams, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input_0, ..., input_n, output]."""
    buffers[-1][...] = np.concatenate(buffers[:-1], axis=params.axis)


def _prepare_mean(graph: Graph, op: Operator) -> PreparedCall:
    (inp, axis_t), _, out = c.operands(graph, op, 2)
    rank = len(inp.shape)
    if rank > _MEAN_MAX_RANK or rank == 0:
        raise c.unsupported(op, f"MEAN supports 1 to {_MEAN_MAX_RANK} dimensions, input has {rank}")
    if axis_t.data is None or axis_t.dtype != np.int32:
        raise c.malformed(op, f"axis tensor {axis_t.index} must be a constant int32 tensor")
    axes: list[int] = []
    for a in (int(v) for v in axis_t.data.reshape(-1)):
        if not -rank <= a < rank:
            raise c.malformed(op, f"axis {a} is out of range for rank {rank}")
        a = a + rank if a < 0 else a
        if a not in axes:
            axes.append(a)
    if len(axes) > _MEAN_MAX_AXES:
        raise c.unsupported(op, f"MEAN over {len(axes)} axes; TFLM supports at most {_MEAN_MAX_AXES}")
    keep = bool(op.options.get("keep_dims", False))
    expected = [1 if k in axes else d for k, d in enumerate(inp.shape) if keep or k not in axes]
    c.check_shape(op, out, expected, "output")
    count = int(np.prod([inp.shape[a] for a in axes], dtype=np.int64))
    if count == 0:
        raise c.malformed(op, "MEAN over an empty axis")
    s_in, z_in = c.per_tensor(op, inp, "input")
    s_out, z_out = c.per_tensor(op, out, "output")
    multiplier, shift = quantize_multiplier(s_in / s_out)
    # Fold 1/count into the multiplier, keeping the shift >= -31 at the price
    # of precision, exactly as TFLM.
    bits = min(count.bit_length() - 1, 32, 31 + shift)
    multiplier = (multiplier << bits) // count
    shift -= bits
    params = MeanParams(tuple(sorted(axes)), count, z_in, z_out, int(multiplier), int(shift))
    return PreparedCall(name="mean_s8", kernel=run_mean, params=params)


def run_mean(params: MeanParams, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, axis, output]."""
    p = params
    out = buffers[2]
    total = c.wrap_i32(buffers[0].astype(np.int64).sum(axis=p.axes))
    shifted = c.wrap_i32(total - p.input_zero_point * p.count)
    y = np.clip(c.requantize(shifted, p.multiplier, p.shift) + p.output_zero_point, -128, 127)
    out[...] = np.asarray(y, dtype=np.int8).reshape(out.shape)
