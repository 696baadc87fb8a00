"""Helpers shared by the host reference kernels.

Everything here mirrors a TensorFlow Lite Micro Prepare-time computation
(padding, activation clamps, quantization checks) or an integer primitive its
reference kernels use, with the C types' behaviour reproduced on numpy int64
arrays that hold int32 values.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from tvmdevice import quantization
from tvmdevice.aot.frontend.errors import ModelFormatError, UnsupportedOperatorError
from tvmdevice.aot.ir import Graph, Operator, Tensor
from tvmdevice.quantization import multiply_by_quantized_multiplier

__all__ = [
    "INT32_MIN", "INT32_MAX", "where", "unsupported", "malformed", "per_tensor", "require_same_quant",
    "activation_range", "wrap_i32", "requantize", "clamp_to_int8",
    "c_div", "check_shape", "operands", "check_window_extent", "MAX_WINDOW_ELEMENTS",
]

#: Largest padded input (elements) a windowed kernel builds.  Legitimate
#: models stay far below (224x224x64 is 3.2M); only absurd dilations or
#: kernel sizes in hostile files reach it.
MAX_WINDOW_ELEMENTS = 1 << 24

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


def where(op: Operator) -> str:
    """``"operator 3 (CONV_2D)"`` for error messages."""
    return f"operator {op.index} ({op.type})"


def unsupported(op: Operator, what: str) -> UnsupportedOperatorError:
    """An error naming the operator and what about it is not implemented."""
    return UnsupportedOperatorError(f"{where(op)}: {what}")


def malformed(op: Operator, what: str) -> ModelFormatError:
    """An error naming the operator and the inconsistency found."""
    return ModelFormatError(f"{where(op)}: {what}")


def per_tensor(op: Operator, t: Tensor, role: str) -> tuple[float, int]:
    """The (scale, zero_point) of a per-tensor quantized int8 tensor.

    The scale is returned as the float32 value TFLM stores, widened to a
    Python float exactly.
    """
    if t.dtype != np.int8:
        raise unsupported(op, f"{role} tensor {t.index} has type {t.dtype}; int8 is required")
    q = t.quant
    if q is None:
        raise unsupported(op, f"{role} tensor {t.index} is not quantized")
    if q.per_channel:
        raise unsupported(op, f"{role} tensor {t.index} is per-channel quantized; only weights may be")
    zp = int(q.zero_point[0])
    if not -128 <= zp <= 127:
        raise unsupported(op, f"{role} tensor {t.index} has zero point {zp} outside the int8 range")
    return float(np.float32(q.scale[0])), zp


def require_same_quant(op: Operator, a: Tensor, b: Tensor) -> None:
    """Operators that move int8 values without rescaling need equal quantization.

    TFLite's quantization spec requires it; TFLM copies the raw values and
    would silently reinterpret them otherwise.
    """
    sa, za = per_tensor(op, a, "input")
    sb, zb = per_tensor(op, b, "output")
    if abs(sa - sb) > 1e-6 or za != zb:
        raise unsupported(op, f"tensors {a.index} and {b.index} must share scale and zero point "
                              f"(got {sa}/{za} and {sb}/{zb}); rescaling is not implemented")


def activation_range(op: Operator, activation: str, scale: float, zero_point: int) -> tuple[int, int]:
    """TFLM's CalculateActivationRangeQuantized for int8 outputs (float32
    division, ties away from zero: :func:`tvmdevice.quantization.activation_range`)."""
    try:
        return quantization.activation_range(activation, scale, zero_point)
    except ValueError:
        raise unsupported(op, f"fused activation {activation!r} is not supported") from None


def wrap_i32(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap of int64 values to int32 range, as C arithmetic does."""
    x = np.asarray(x, dtype=np.int64)
    return ((x + 2**31) & 0xFFFFFFFF) - 2**31


def requantize(acc: np.ndarray, multiplier: np.ndarray | int, shift: np.ndarray | int) -> np.ndarray:
    """MultiplyByQuantizedMultiplier on int32 accumulators (int64 in, int64 out)."""
    return multiply_by_quantized_multiplier(wrap_i32(acc), multiplier, shift)


def clamp_to_int8(x: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Clamp to the activation range and narrow to int8."""
    return np.clip(x, lo, hi).astype(np.int8)


def c_div(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """Integer division truncating toward zero, as C does (numpy floors)."""
    a = np.asarray(a, dtype=np.int64)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (np.asarray(b) < 0), -q, q)


def check_shape(op: Operator, t: Tensor, expected: Sequence[int], role: str) -> None:
    """Raise a format error unless ``t`` has exactly the ``expected`` shape."""
    if tuple(t.shape) != tuple(int(d) for d in expected):
        raise malformed(op, f"{role} tensor {t.index} has shape {list(t.shape)}, expected {list(expected)}")


def operands(graph: Graph, op: Operator, required: int, optional: int = 0
             ) -> tuple[list[Tensor], list[Tensor | None], Tensor]:
    """(required inputs, optional inputs padded with None, the single output).

    :raises ModelFormatError: for a wrong operand count or an absent required input.
    """
    ins = graph.op_inputs(op)
    if not required <= len(ins) <= required + optional or len(op.outputs) != 1:
        raise malformed(op, f"has {len(ins)} inputs and {len(op.outputs)} outputs")
    req: list[Tensor] = []
    for k, t in enumerate(ins[:required]):
        if t is None:
            raise malformed(op, f"required input {k} is absent")
        req.append(t)
    opt = list(ins[required:]) + [None] * (required + optional - len(ins))
    return req, opt, graph.op_outputs(op)[0]

def check_window_extent(op: Operator, shape: Sequence[int], effective: tuple[int, int]) -> None:
    """Refuse windows so large that padding the input would exhaust memory.

    TFLM skips taps outside the image one by one; the reference pads the
    input instead, which needs ``N * (H + KH_eff) * (W + KW_eff) * C`` cells.
    """
    n, h, w, ch = shape
    cells = n * (h + effective[0]) * (w + effective[1]) * ch
    if cells > MAX_WINDOW_ELEMENTS:
        raise unsupported(op, f"effective filter size {effective} on input {list(shape)} needs {cells} "
                              f"padded cells, over the reference kernel's {MAX_WINDOW_ELEMENTS}")
