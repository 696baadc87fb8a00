"""Prepare-time helpers shared by the operator analyses.

They mirror TensorFlow Lite Micro's Prepare computations (padding, output
size, activation clamps, multipliers) and collect the checks every kernel
relies on.  Failures raise :class:`NotSupportedError` for something the
kernels do not do and :class:`InvalidArgumentError` for an operator whose
tensors are inconsistent; ``tvmdevice_check_operator`` turns either into a
refusal reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tvmdevice import quantization, windows
from tvmdevice.aot.ir import Graph, Operator, Tensor
from tvmdevice.errors import InvalidArgumentError, NotSupportedError
from tvmdevice.quantization import quantize_multiplier

__all__ = [
    "BufferSpec", "KernelSpec", "where", "unsupported", "invalid", "io", "int8_quant", "activation_range",
    "out_size", "leading_padding", "multipliers", "padded", "constant", "check_accumulator", "count",
    "check_extent", "check_output_shape", "positive", "padding_kind", "buffer", "bias_spec", "filter_scales",
]

INT32_MAX = 2**31 - 1
#: Output-channel block of the depthwise loops (TVMD_CMSIS_NB).
NB = 16
#: GEMM output columns are padded to a multiple of this (TVMD_CMSIS_GEMM_COLS).
GEMM_COLS = 16
#: Largest dimension or element count handed to C (its loops use int32).
MAX_ELEMENTS = 2**31 - 1


@dataclass(frozen=True)
class BufferSpec:
    """What one kernel buffer must be: element count and dtype (shape for messages).

    :param role: ``"input"``, ``"filter"``, ``"bias"``, ``"output"``...
    :param tensor: graph tensor index, ``-1`` for an absent optional input.
    :param shape: the tensor's shape.
    :param dtype: numpy dtype name.
    :param absent: the optional input is absent; pass ``None``.
    :param output: the kernel writes it.
    """

    role: str
    tensor: int
    shape: tuple[int, ...]
    dtype: str
    absent: bool = False
    output: bool = False

    @property
    def size(self) -> int:
        return count(self.shape)


@dataclass
class KernelSpec:
    """A validated kernel call: everything the C params struct needs.

    :param kind: kernel family, a key of ``tvmdevice_cmsis._kernels.KINDS``.
    :param name: the C symbol, ``tvmd_cmsis_<op>_s8``.
    :param fields: the struct's scalar members by name.
    :param arrays: contiguous numpy arrays the struct points into.
    :param buffers: the call's buffers in order (inputs, then outputs).
    """

    kind: str
    name: str
    fields: dict[str, Any]
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    buffers: tuple[BufferSpec, ...] = ()


def where(op: Operator) -> str:
    return f"operator {op.index} ({op.type})"


def unsupported(op: Operator, what: str) -> NotSupportedError:
    return NotSupportedError(f"cmsis-nn: {where(op)}: {what}")


def invalid(op: Operator, what: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"cmsis-nn: {where(op)}: {what}")


def count(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def io(graph: Graph, op: Operator, lo: int, hi: int) -> tuple[list[Tensor | None], Tensor]:
    """The operator's inputs (checked count, required ones present) and its single output."""
    if not lo <= len(op.inputs) <= hi:
        raise invalid(op, f"has {len(op.inputs)} inputs, expected {lo}..{hi}")
    if len(op.outputs) != 1:
        raise invalid(op, f"has {len(op.outputs)} outputs, expected 1")
    n = len(graph.tensors)
    for i in tuple(op.inputs) + tuple(op.outputs):
        if not (i == -1 or 0 <= i < n):
            raise invalid(op, f"tensor index {i} is out of range")
    ins = graph.op_inputs(op)
    for k in range(lo):
        if ins[k] is None:
            raise invalid(op, f"required input {k} is absent")
    out = graph.op_outputs(op)[0]
    for t in [*ins, out]:
        if t is not None:
            if any(int(d) <= 0 for d in t.shape):
                raise unsupported(op, f"tensor {t.index} has an empty shape {list(t.shape)}")
            if count(t.shape) > MAX_ELEMENTS:
                raise unsupported(op, f"tensor {t.index} has more than {MAX_ELEMENTS} elements")
    return ins, out


def buffer(role: str, t: Tensor | None, *, output: bool = False) -> BufferSpec:
    if t is None:
        return BufferSpec(role, -1, (), "int32", absent=True)
    return BufferSpec(role, t.index, tuple(int(d) for d in t.shape), np.dtype(t.dtype).name, output=output)


def int8_quant(op: Operator, t: Tensor, role: str) -> tuple[float, int]:
    """``(scale, zero_point)`` of a per-tensor quantized int8 tensor.

    The scale is the float32 TFLM stores, widened exactly to a Python float.
    """
    if np.dtype(t.dtype) != np.int8:
        raise unsupported(op, f"{role} tensor {t.index} is {np.dtype(t.dtype).name}; the kernels are int8")
    q = t.quant
    if q is None or q.scale.size == 0:
        raise unsupported(op, f"{role} tensor {t.index} is not quantized")
    if q.scale.size != 1:
        raise unsupported(op, f"{role} tensor {t.index} is per-channel quantized; only weights may be")
    scale = float(np.float32(q.scale[0]))
    if not (math.isfinite(scale) and scale > 0):
        raise invalid(op, f"{role} tensor {t.index} has scale {scale}")
    zp = int(q.zero_point[0])
    if not -128 <= zp <= 127:
        raise invalid(op, f"{role} tensor {t.index} has zero point {zp} outside the int8 range")
    return scale, zp


def activation_range(op: Operator, activation: str, scale: float, zero_point: int) -> tuple[int, int]:
    """TFLM's CalculateActivationRangeQuantized for an int8 output (the core's, naming the operator)."""
    try:
        return quantization.activation_range(activation, scale, zero_point)
    except ValueError:
        raise unsupported(op, f"fused activation {activation!r} is not supported") from None


def positive(op: Operator, options: dict[str, Any], *keys: str) -> tuple[int, ...]:
    """Integer options that must be >= 1 (strides, dilations, filter sizes)."""
    values = []
    for key in keys:
        try:
            v = int(options[key])
        except (KeyError, TypeError, ValueError):
            raise invalid(op, f"option {key} is missing or not an integer") from None
        if not 1 <= v <= MAX_ELEMENTS:
            raise invalid(op, f"option {key} = {v} must be >= 1")
        values.append(v)
    return tuple(values)


def padding_kind(op: Operator) -> str:
    pad = op.options.get("padding")
    if pad not in ("SAME", "VALID"):
        raise unsupported(op, f"padding {pad!r} is not SAME or VALID")
    return pad


out_size = windows.out_size
leading_padding = windows.leading_padding


def check_extent(op: Operator, image: int, out: int, stride: int, filt: int, dilation: int = 1) -> None:
    """Refuse geometry whose input coordinates would overflow the kernels' int32 arithmetic."""
    reach = (out - 1) * stride + (filt - 1) * dilation + 1
    if reach + image > MAX_ELEMENTS:
        raise unsupported(op, f"window reach {reach} over an image of {image} overflows int32 coordinates")


def check_output_shape(op: Operator, out: Tensor, expected: tuple[int, ...]) -> None:
    if tuple(int(d) for d in out.shape) != tuple(expected):
        raise invalid(op, f"output tensor {out.index} has shape {list(out.shape)}, expected {list(expected)}")


def multipliers(op: Operator, real: np.ndarray | list[float]) -> tuple[np.ndarray, np.ndarray]:
    """Q31 multipliers and shifts for real rescale factors, checked for the C requantization.

    A left shift above 30 or a multiplier outside [0, 2**31) cannot be
    applied without overflow, so such factors are refused.
    """
    mult, shift = [], []
    for r in np.asarray(real, dtype=np.float64).ravel():
        if not (math.isfinite(r) and r >= 0):
            raise invalid(op, f"rescale factor {r} is not a finite non-negative number")
        m, s = quantize_multiplier(float(r))
        if not (0 <= m <= INT32_MAX and -31 <= s <= 30):
            raise unsupported(op, f"rescale factor {r} gives multiplier {m}, shift {s} outside the int32 range")
        mult.append(m)
        shift.append(s)
    return np.array(mult, dtype=np.int32), np.array(shift, dtype=np.int32)


def padded(n: int, block: int = NB) -> int:
    """``n`` rounded up to a multiple of ``block``."""
    return (n + block - 1) // block * block


def pair_interleaved(rows: np.ndarray) -> np.ndarray:
    """``[n, k]`` integer weights in the GEMM's layout: int16 ``[k_pairs, 2 * ldw]``.

    Element ``[p, 2 * j + q]`` is ``rows[j, 2 * p + q]``: two consecutive
    reduction steps of output column ``j`` side by side (what one 2 x 16-bit
    multiply-add consumes), zero where ``j >= n`` or ``2 * p + q >= k``.
    """
    n, k = rows.shape
    ldw = padded(n, GEMM_COLS)
    out = np.zeros(((k + 1) // 2, ldw, 2), dtype=np.int16)
    full = np.zeros((2 * out.shape[0], ldw), dtype=np.int16)
    full[:k, :n] = rows.T
    out[:, :, 0] = full[0::2]
    out[:, :, 1] = full[1::2]
    return out.reshape(out.shape[0], 2 * ldw)


def constant(op: Operator, t: Tensor, role: str) -> np.ndarray:
    """The data of a constant tensor; the kernels prepare weights at compile time."""
    if t.data is None:
        raise unsupported(op, f"{role} tensor {t.index} is not constant; cmsis-nn needs constant weights")
    data = np.asarray(t.data)
    if data.size != count(t.shape):
        raise invalid(op, f"{role} tensor {t.index} holds {data.size} values for shape {list(t.shape)}")
    return data.reshape(tuple(int(d) for d in t.shape))


def check_accumulator(op: Operator, abs_weight_sums: np.ndarray, max_abs_input: int) -> None:
    """Refuse weights whose dot products could overflow the int32 accumulator.

    ``max_abs_input * sum(|w|)`` bounds every partial sum, in any order, so
    the C kernels (which sum in a different order than TFLM) never overflow
    where TFLM does not.
    """
    worst = int(np.max(abs_weight_sums, initial=0)) * max_abs_input
    if worst > INT32_MAX:
        raise unsupported(op, f"dot products up to {worst} could overflow the int32 accumulator")


def weighted_buffers(op: Operator, inp: Tensor, filt: Tensor, bias: Tensor | None, out: Tensor,
                     filter_role: str = "filter") -> tuple[BufferSpec, ...]:
    """Buffers of a convolution or dense call: a bias slot only when the operator lists one."""
    specs = [buffer("input", inp), buffer(filter_role, filt)]
    if len(op.inputs) == 3:
        specs.append(buffer("bias", bias))
    return (*specs, buffer("output", out, output=True))


def bias_spec(op: Operator, bias: Tensor | None, channels: int) -> None:
    if bias is None:
        return
    if np.dtype(bias.dtype) != np.int32:
        raise unsupported(op, f"bias tensor {bias.index} is {np.dtype(bias.dtype).name}; int32 is required")
    if count(bias.shape) != channels:
        raise invalid(op, f"bias tensor {bias.index} has {count(bias.shape)} values for {channels} channels")


def filter_scales(op: Operator, filt: Tensor, channels: int, axis: int) -> list[float]:
    """Per-channel filter scales (a per-tensor scale repeated), filter zero points 0."""
    if np.dtype(filt.dtype) != np.int8:
        raise unsupported(op, f"filter tensor {filt.index} is {np.dtype(filt.dtype).name}; int8 is required")
    q = filt.quant
    if q is None or q.scale.size == 0:
        raise unsupported(op, f"filter tensor {filt.index} is not quantized")
    if np.any(np.asarray(q.zero_point) != 0):
        # TFLM's per-channel kernels ignore the filter zero point.
        raise unsupported(op, f"filter tensor {filt.index} has a non-zero zero point")
    if q.scale.size not in (1, channels) or (q.scale.size > 1 and q.axis != axis):
        raise unsupported(op, f"filter tensor {filt.index} has {q.scale.size} scales on axis {q.axis}; "
                              f"expected 1 or {channels} on axis {axis}")
    scales = [float(np.float32(s)) for s in np.asarray(q.scale).ravel()]
    if not all(math.isfinite(s) and s > 0 for s in scales):
        raise invalid(op, f"filter tensor {filt.index} has a non-positive or non-finite scale")
    return scales * channels if len(scales) == 1 else scales
