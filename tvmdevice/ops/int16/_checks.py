"""The checks the int16x8 analyses share: per-tensor int16 quantization, symmetric zero points, int16 clamps.

TFLM's int16x8 scheme (the converter's "16x8" mode): int16 activations with
zero point 0, int8 symmetric weights, int64 biases for convolutions and fully
connected layers.  Kernels that assume a zero point of 0 refuse another one
here, as TFLM's Prepare does.
"""

from __future__ import annotations

import numpy as np

from tvmdevice.ir import Operator, Tensor
from tvmdevice.ops import _checks as c

__all__ = ["INT16_MIN", "INT16_MAX", "dtype_name", "is_int16", "per_tensor", "symmetric", "activation_range16"]

INT16_MIN = -(2**15)
INT16_MAX = 2**15 - 1


def dtype_name(t: Tensor | None) -> str:
    """``"int8"``, ``"int16"``, ``"float32"``... (``""`` for an absent operand)."""
    return "" if t is None else np.dtype(t.dtype).name


def is_int16(t: Tensor | None) -> bool:
    return t is not None and np.dtype(t.dtype) == np.int16


def per_tensor(op: Operator, t: Tensor, role: str, dtype: str) -> tuple[float, int]:
    """``(scale, zero_point)`` of a per-tensor quantized tensor of ``dtype`` (int8 or int16)."""
    if dtype == "int8":
        return c.per_tensor_int8(op, t, role)
    if np.dtype(t.dtype) != np.dtype(dtype):
        raise c.refuse(op, f"{role} tensor {t.index} is {np.dtype(t.dtype).name}; {dtype} is required")
    q = t.quant
    if q is None or q.scale.size == 0:
        raise c.refuse(op, f"{role} tensor {t.index} is not quantized")
    if q.scale.size != 1:
        raise c.refuse(op, f"{role} tensor {t.index} is per-channel quantized; only weights may be")
    zp = int(q.zero_point[0])
    if not INT16_MIN <= zp <= INT16_MAX:
        raise c.malformed(op, f"tensor {t.index} has zero point {zp} outside the int16 range")
    return float(np.float32(q.scale[0])), zp


def symmetric(op: Operator, t: Tensor, role: str) -> float:
    """The scale of an int16 tensor whose zero point must be 0 (TFLM's int16 kernels assume it)."""
    scale, zp = per_tensor(op, t, role, "int16")
    if zp != 0:
        raise c.refuse(op, f"int16 {role} tensor {t.index} has zero point {zp}; TFLM's int16 {op.type} needs 0")
    return scale


def activation_range16(op: Operator, scale: float, zero_point: int) -> tuple[int, int]:
    """TFLM's CalculateActivationRangeQuantized for an int16 output."""
    from tvmdevice import quantization

    activation = op.options.get("fused_activation", "NONE")
    try:
        return quantization.activation_range(str(activation), scale, zero_point, INT16_MIN, INT16_MAX)
    except quantization.ActivationBoundOverflow as overflow:
        raise c.refuse(op, str(overflow)) from None
    except ValueError:
        raise c.refuse(op, f"fused activation {activation!r} is not supported") from None
