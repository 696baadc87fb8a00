"""Prepare-time helpers shared by the woofles operator planners.

Everything here runs at compile time and mirrors a TensorFlow Lite Micro
Prepare computation (output sizes, padding, activation clamps), or enforces
one of the NPU's declared limits.  A planner that meets something the NPU
cannot run raises :class:`Refusal`; ``tvmdevice_check_operator`` turns that
into the refusal reason placement reports, and ``tvmdevice_prepare_operator``
lets it propagate as a :class:`~tvmdevice.errors.NotSupportedError`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from tvmdevice import quantization, windows
from tvmdevice.aot.ir import Graph, Operator, Tensor
from tvmdevice.errors import NotSupportedError

__all__ = [
    "Refusal", "INT32_LIMIT", "ALLOC_ALIGNMENT", "int8_per_tensor", "activation_range", "out_size", "padding",
    "check_limit", "check_fits_sram", "check_elements", "check_shifts", "operands",
]

#: Element counts and byte sizes the C kernels index with must stay below this.
INT32_LIMIT = 2**31 - 1
#: Alignment the executor allocates tensors with; used to estimate SRAM need.
ALLOC_ALIGNMENT = 64


class Refusal(NotSupportedError):
    """The woofles NPU cannot run this operator; the message is the reason."""


def operands(graph: Graph, op: Operator, required: int,
             optional: int = 0) -> tuple[list[Tensor], list[Tensor | None], Tensor]:
    """The operator's required inputs, its optional ones (``None`` where absent), and its single output."""
    ins = graph.op_inputs(op)
    if not required <= len(ins) <= required + optional or len(op.outputs) != 1:
        raise Refusal(f"{op.type} with {len(ins)} inputs and {len(op.outputs)} outputs")
    needed = [t for t in ins[:required] if t is not None]
    if len(needed) != required:
        raise Refusal(f"{op.type} is missing a required input")
    return needed, ins[required:], graph.op_outputs(op)[0]


def int8_per_tensor(t: Tensor, role: str) -> tuple[float, int]:
    """(scale, zero point) of a per-tensor quantized int8 activation tensor.

    The scale is the float32 TFLite stores, widened exactly.
    """
    if np.dtype(t.dtype) != np.int8:
        raise Refusal(f"{role} tensor {t.index} is {np.dtype(t.dtype).name}; the NPU computes int8 only")
    q = t.quant
    if q is None or q.scale.size == 0:
        raise Refusal(f"{role} tensor {t.index} is not quantized")
    if q.per_channel:
        raise Refusal(f"{role} tensor {t.index} is per-channel quantized")
    zero_point = int(q.zero_point[0])
    if not -128 <= zero_point <= 127:
        raise Refusal(f"{role} tensor {t.index} has zero point {zero_point} outside int8")
    scale = float(np.float32(q.scale[0]))
    if not (scale > 0.0 and math.isfinite(scale)):
        raise Refusal(f"{role} tensor {t.index} has scale {scale}")
    return scale, zero_point


def activation_range(activation: str, scale: float, zero_point: int) -> tuple[int, int]:
    """TFLM's CalculateActivationRangeQuantized for an int8 output (the core's, as a Refusal)."""
    try:
        return quantization.activation_range(activation, scale, zero_point)
    except ValueError:
        raise Refusal(f"fused activation {activation!r} is not supported") from None


def out_size(pad: str, image: int, filt: int, stride: int, dilation: int = 1) -> int:
    """TFLM's ComputeOutSize (the core's, with an unknown padding as a Refusal)."""
    try:
        return windows.out_size(pad, image, filt, stride, dilation)
    except ValueError:
        raise Refusal(f"padding {pad!r} is not supported") from None


padding = windows.leading_padding


def check_limit(value: int, limit: int, what: str, option: str) -> None:
    """Refuse ``value`` above one of the NPU's declared limits."""
    if value > limit:
        raise Refusal(f"{what} {value} exceeds the NPU limit -{option}={limit}")


def check_elements(t: Tensor, role: str) -> int:
    """A tensor's element count, refused when the kernels' int32 indexing cannot hold it."""
    n = int(np.prod(t.shape, dtype=np.int64))
    if n <= 0:
        raise Refusal(f"{role} tensor {t.index} is empty (shape {list(t.shape)})")
    if n * np.dtype(t.dtype).itemsize > INT32_LIMIT:
        raise Refusal(f"{role} tensor {t.index} has {n} elements; the NPU indexes at most 2 GiB")
    return n


def check_fits_sram(tensors: list[Tensor | None], options: dict[str, Any]) -> None:
    """Refuse an operator whose own tensors cannot all be resident in SRAM at once."""
    need = 0
    for t in tensors:
        if t is not None:
            need += -(-t.nbytes // ALLOC_ALIGNMENT) * ALLOC_ALIGNMENT
    sram = int(options["sram_kb"]) * 1024
    if need > sram:
        raise Refusal(f"its tensors need {need} B of SRAM, the device has {sram} B (-sram_kb)")


def check_shifts(shift: np.ndarray) -> None:
    """Refuse requantization shifts the C code cannot apply without undefined behaviour.

    ``quant.h`` shifts an int32 left by a positive shift and divides by
    ``2**-shift`` otherwise; both need the shift within [-31, 30].
    """
    if shift.size and (int(shift.max()) > 30 or int(shift.min()) < -31):
        raise Refusal(f"a rescale factor needs shift {int(shift.max())}..{int(shift.min())}, outside [-31, 30]")
