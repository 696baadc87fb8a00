"""The checks every operator analysis shares, written once.

Operand fetching, per-tensor int8 quantization, filter scales, multipliers
checked for the C requantization, the fused activation range, broadcast
strides and the "same quantization" rule of the kernels that do not rescale.
Structural problems raise :class:`~tvmdevice.errors.ModelFormatError`;
parameters no TFLM int8 kernel supports raise :class:`~tvmdevice.errors.Refusal`.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from tvmdevice import quantization, windows
from tvmdevice.errors import ModelFormatError, Refusal
from tvmdevice.ir import Graph, Operator, Tensor

__all__ = [
    "INT32_MIN", "INT32_MAX", "MAX_ELEMENTS", "where", "malformed", "refuse", "count", "operands",
    "check_shape", "int_option", "padding", "out_size", "leading_padding", "per_tensor_int8", "filter_scales",
    "bias", "multipliers", "multiplier", "activation_range", "same_quantization", "broadcast_strides",
    "readonly", "check_element_limits",
]

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
#: Largest element count (and dimension) handed to a kernel: C loops index with int32.
MAX_ELEMENTS = INT32_MAX
#: TFLM's pooling Prepare: ``|double(input scale) - double(output scale)| <= 1e-6``.
POOL_SCALE_TOLERANCE = 1.0e-6


def where(op: Operator) -> str:
    """``"operator 3 (CONV_2D)"``, the prefix of every format error."""
    return f"operator {op.index} ({op.type})"


def malformed(op: Operator, what: str) -> ModelFormatError:
    """A format error naming the operator and the inconsistency."""
    return ModelFormatError(f"{where(op)}: {what}")


def refuse(op: Operator, what: str) -> Refusal:
    """A refusal naming the operator and what no kernel supports."""
    return Refusal(what, op=op)


def count(shape: Sequence[int]) -> int:
    """Element count of ``shape`` (Python ints: no overflow)."""
    n = 1
    for d in shape:
        n *= int(d)
    return n


def operands(graph: Graph, op: Operator, required: int, optional: int = 0
             ) -> tuple[list[Tensor], list[Tensor | None], Tensor]:
    """(required inputs, optional inputs padded with None, the single output).

    :raises ModelFormatError: a wrong operand count, an index out of range, an
        absent required input, or an empty tensor.
    """
    if not required <= len(op.inputs) <= required + optional or len(op.outputs) != 1:
        raise malformed(op, f"has {len(op.inputs)} inputs and {len(op.outputs)} outputs; expected "
                            f"{required}..{required + optional} inputs and 1 output")
    n = len(graph.tensors)
    for i in (*op.inputs, *op.outputs):
        if not (i == -1 or 0 <= i < n):
            raise malformed(op, f"tensor index {i} is out of range [0, {n})")
    ins = graph.op_inputs(op)
    req: list[Tensor] = []
    for k, t in enumerate(ins[:required]):
        if t is None:
            raise malformed(op, f"required input {k} is absent")
        req.append(t)
    if -1 in op.outputs:
        raise malformed(op, "its output is absent")
    out = graph.op_outputs(op)[0]
    for t in (*ins, out):
        if t is not None:
            # A constant may be empty (a RESHAPE to a scalar has a [0] shape operand).
            if any(int(d) <= 0 for d in t.shape) and not t.is_constant:
                raise malformed(op, f"tensor {t.index} has an empty shape {list(t.shape)}")
            _check_quantization(op, t)
    opt = list(ins[required:]) + [None] * (required + optional - len(ins))
    return req, opt, out


def _check_quantization(op: Operator, t: Tensor) -> None:
    """Quantization a tensor cannot have: non-finite or non-positive scales, int8 zero points outside int8."""
    q = t.quant
    if q is None:
        return
    scales = np.asarray(q.scale, dtype=np.float32)
    if not np.all(np.isfinite(scales)) or np.any(scales <= 0):
        raise malformed(op, f"tensor {t.index} has a non-positive or non-finite scale")
    zero_points = np.asarray(q.zero_point, dtype=np.int64)
    outside = zero_points[(zero_points < -128) | (zero_points > 127)]
    if np.dtype(t.dtype) == np.int8 and outside.size:
        raise malformed(op, f"tensor {t.index} has zero point {int(outside[0])} outside the int8 range")


def check_element_limits(graph: Graph, op: Operator) -> None:
    """Refuse tensors too large for the kernels' int32 indexing."""
    for i in (*op.inputs, *op.outputs):
        if 0 <= i < len(graph.tensors):
            t = graph.tensors[i]
            if count(t.shape) * np.dtype(t.dtype).itemsize > MAX_ELEMENTS:
                raise refuse(op, f"tensor {t.index} ({list(t.shape)}) is over 2 GiB; the kernels index with int32")


def check_shape(op: Operator, t: Tensor, expected: Sequence[int], role: str) -> None:
    """A format error unless ``t`` has exactly the ``expected`` shape."""
    if tuple(int(d) for d in t.shape) != tuple(int(d) for d in expected):
        raise malformed(op, f"{role} tensor {t.index} has shape {list(t.shape)}, expected {list(expected)}")


def int_option(op: Operator, key: str, minimum: int = 1, default: Any = None) -> int:
    """An integer option of at least ``minimum`` (strides, dilations, filter sizes)."""
    value = op.options.get(key, default)
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise malformed(op, f"option {key} is missing or not an integer ({value!r})") from None
    if not minimum <= v <= MAX_ELEMENTS:
        raise malformed(op, f"option {key} = {v} must be >= {minimum}")
    return v


def padding(op: Operator) -> str:
    """The padding kind; another value is refused (TFLM has only SAME and VALID)."""
    if "padding" not in op.options:
        raise malformed(op, "option padding is missing")
    kind = op.options["padding"]
    if kind not in windows.PADDINGS:
        raise refuse(op, f"padding {kind!r} is not SAME or VALID")
    return str(kind)


out_size = windows.out_size

#: TFLM keeps a window's padding in ``PaddingValues``, whose members are int16_t.
MAX_WINDOW_PADDING = 2**15 - 1


def leading_padding(op: Operator, stride: int, dilation: int, image: int, filt: int, out: int) -> int:
    """TFLM's top/left padding of a window (:func:`tvmdevice.windows.leading_padding`), within int16.

    A larger padding (a huge dilation or filter) wraps in TFLM's int16 ``PaddingValues``, so
    its windows are not the padded image's; such a model is refused rather than matched.
    """
    pad = windows.leading_padding(stride, dilation, image, filt, out)
    if pad > MAX_WINDOW_PADDING:
        raise malformed(op, f"its window needs padding {pad}, beyond the {MAX_WINDOW_PADDING} TFLM's int16 "
                            "PaddingValues hold (a filter, dilation or window far larger than the input)")
    return pad


def per_tensor_int8(op: Operator, t: Tensor, role: str) -> tuple[float, int]:
    """``(scale, zero_point)`` of a per-tensor quantized int8 tensor.

    The scale is the float32 TFLM stores, widened exactly to a Python float.
    """
    if np.dtype(t.dtype) != np.int8:
        raise refuse(op, f"{role} tensor {t.index} is {np.dtype(t.dtype).name}; int8 is required")
    q = t.quant
    if q is None or q.scale.size == 0:
        raise refuse(op, f"{role} tensor {t.index} is not quantized")
    if q.scale.size != 1:
        raise refuse(op, f"{role} tensor {t.index} is per-channel quantized; only weights may be")
    # Scales and zero points were checked with the operands (:func:`operands`).
    return float(np.float32(q.scale[0])), int(q.zero_point[0])


def filter_scales(op: Operator, filt: Tensor, channels: int, axis: int, role: str = "filter") -> list[float]:
    """One float32 scale per output channel (a per-tensor scale repeated); zero points must be 0.

    TFLM's per-channel kernels ignore the filter zero point, so a non-zero one
    would be silently wrong and is refused.
    """
    if np.dtype(filt.dtype) != np.int8:
        raise refuse(op, f"{role} tensor {filt.index} is {np.dtype(filt.dtype).name}; int8 is required")
    q = filt.quant
    if q is None or q.scale.size == 0:
        raise refuse(op, f"{role} tensor {filt.index} is not quantized")
    if np.any(np.asarray(q.zero_point) != 0):
        raise refuse(op, f"{role} tensor {filt.index} has a non-zero zero point")
    if q.scale.size not in (1, channels) or (q.scale.size > 1 and q.axis != axis):
        raise refuse(op, f"{role} tensor {filt.index} has {q.scale.size} scales on axis {q.axis}; "
                         f"expected 1 or {channels} on axis {axis}")
    scales = [float(np.float32(s)) for s in np.asarray(q.scale).ravel()]
    return scales * channels if len(scales) == 1 else scales


def bias(op: Operator, t: Tensor | None, channels: int) -> None:
    """An optional bias: int32 with one value per output channel."""
    if t is None:
        return
    if np.dtype(t.dtype) != np.int32:
        raise malformed(op, f"bias tensor {t.index} is {np.dtype(t.dtype).name}; int32 is required")
    if count(t.shape) != channels:
        raise malformed(op, f"bias tensor {t.index} has {count(t.shape)} values for {channels} channels")


def multipliers(op: Operator, real: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Read-only int32 Q31 multipliers and shifts (TFLM's QuantizeMultiplier, shift > 0 = left).

    A factor needing a left shift above 30 (a rescale of 2**30 or more, e.g.
    an output scale near 1e-30) is refused.  TFLM's double-rounding
    MultiplyByQuantizedMultiplier computes ``x * (1 << shift)`` in int32 for it:
    a shift of 32 or more and the overflowing product are undefined behaviour
    in C, so TFLM's result depends on the machine (an x86 build masks the
    shift count to 5 bits and wraps; a Cortex-M register shift gives 0) and
    there is nothing to be bit-exact with.  Right shifts stop at 31 because
    QuantizeMultiplier flushes smaller factors to 0, as TFLM does.
    """
    mult, shift = [], []
    for r in np.asarray(real, dtype=np.float64).ravel():
        if not (math.isfinite(r) and r >= 0):
            raise refuse(op, f"rescale factor {r} is not a finite non-negative number")
        m, s = quantization.quantize_multiplier(float(r))
        if not (0 <= m <= INT32_MAX and -31 <= s <= 30):
            raise refuse(op, f"rescale factor {r} needs multiplier {m}, shift {s}: outside the int32 "
                             f"requantization's shift range [-31, 30] (TFLM's result there is undefined "
                             f"behaviour: an int32 shifted by {s} bits)")
        mult.append(m)
        shift.append(s)
    return readonly(np.array(mult, dtype=np.int32)), readonly(np.array(shift, dtype=np.int32))


def multiplier(op: Operator, real: float) -> tuple[int, int]:
    """One checked ``(multiplier, shift)`` (see :func:`multipliers`)."""
    m, s = multipliers(op, [real])
    return int(m[0]), int(s[0])


def activation_range(op: Operator, activation: Any, scale: float, zero_point: int) -> tuple[int, int]:
    """TFLM's CalculateActivationRangeQuantized for an int8 output; an unknown activation is refused."""
    try:
        return quantization.activation_range(str(activation), scale, zero_point)
    except quantization.ActivationBoundOverflow as overflow:
        raise refuse(op, str(overflow)) from None
    except ValueError:
        raise refuse(op, f"fused activation {activation!r} is not supported") from None


def same_quantization(op: Operator, a: Tensor, b: Tensor) -> None:
    """Input and output of a kernel that does not rescale must share quantization.

    The rule is TFLM's pooling Prepare (``pooling_common.cc``): the float32
    scales, widened to double, differ by at most 1e-6 (absolute), and the zero
    points are equal.
    """
    sa, za = per_tensor_int8(op, a, "input")
    sb, zb = per_tensor_int8(op, b, "output")
    if not abs(sa - sb) <= POOL_SCALE_TOLERANCE or za != zb:
        raise refuse(op, f"tensors {a.index} and {b.index} must share scale and zero point (got {sa}/{za} and "
                         f"{sb}/{zb}); the int8 kernel does not rescale")


def broadcast_strides(shape: Sequence[int], out_shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of ``shape`` right-aligned to ``out_shape``, 0 along a broadcast dimension."""
    rank = len(out_shape)
    padded = (1,) * (rank - len(shape)) + tuple(int(d) for d in shape)
    strides, step = [0] * rank, 1
    for d in range(rank - 1, -1, -1):
        strides[d] = step if padded[d] != 1 or int(out_shape[d]) == 1 else 0
        step *= padded[d]
    return tuple(strides)


def readonly(a: np.ndarray) -> np.ndarray:
    """``a`` with writes disabled (op data is shared by every device)."""
    a.flags.writeable = False
    return a
