"""Checks the recurrent operators (UNIDIRECTIONAL_SEQUENCE_LSTM, SVDF) share.

Both read int8 *and* int16 tensors, per-tensor quantized, and keep their
state in TFLite variable tensors; TFLM's Prepare multiplies scales in float32
before widening them to double, which :func:`f32` reproduces.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from tvmdevice.ir import Operator, Tensor
from tvmdevice.ops import _checks as c

__all__ = ["INT8_16", "f32", "per_tensor", "state", "int64_requant_shift", "INT16_MIN", "INT16_MAX"]

INT8_16 = frozenset({np.dtype("i1"), np.dtype("<i2")})
INT16_MIN = -(2**15)
INT16_MAX = 2**15 - 1


def f32(x: float) -> float:
    """``x`` rounded to float32, as a Python float (TFLM's float arithmetic, step by step)."""
    return float(np.float32(x))


def per_tensor(op: Operator, t: Tensor, role: str, dtypes: Iterable[Any]) -> tuple[float, int]:
    """``(scale, zero_point)`` of a per-tensor quantized tensor of one of ``dtypes``.

    :raises Refusal: another dtype, no quantization, or per-channel scales
        (TFLM's LSTM and SVDF read ``params.scale``, one scale per tensor).
    """
    allowed = tuple(np.dtype(d) for d in dtypes)
    if np.dtype(t.dtype) not in allowed:
        names = " or ".join(d.name for d in allowed)
        raise c.refuse(op, f"{role} tensor {t.index} is {np.dtype(t.dtype).name}; {names} is required")
    q = t.quant
    if q is None or q.scale.size == 0:
        raise c.refuse(op, f"{role} tensor {t.index} is not quantized")
    if q.scale.size != 1:
        raise c.refuse(op, f"{role} tensor {t.index} has {q.scale.size} per-channel scales; TFLM's "
                           f"{op.type} reads one scale per tensor")
    zp = int(q.zero_point[0])
    if np.dtype(t.dtype) == np.int16 and not INT16_MIN <= zp <= INT16_MAX:
        raise c.malformed(op, f"{role} tensor {t.index} has zero point {zp} outside the int16 range")
    return f32(q.scale[0]), zp


def state(op: Operator, t: Tensor | None, role: str, shape: tuple[int, int]) -> Tensor:
    """A state operand: present, a variable tensor (TFLM checks ``is_variable``), 2-D of ``shape``.

    TFLM reads the state's dimensions, not its element count (the LSTM's state size is
    ``hidden_state->dims->data[1]``; ``ValidateTensorSize`` and SVDF's prepare check both).
    """
    if t is None:
        raise c.malformed(op, f"its {role} (a variable tensor) is absent")
    if not t.is_variable:
        raise c.refuse(op, f"{role} tensor {t.index} is not a variable tensor; TFLM keeps {op.type} state in "
                           "variable tensors and refuses the operator otherwise")
    if tuple(int(d) for d in t.shape) != tuple(shape):
        raise c.malformed(op, f"{role} tensor {t.index} has shape {list(t.shape)}; expected {list(shape)}")
    return t


def int64_requant_shift(op: Operator, shift: np.ndarray, what: str) -> None:
    """TFLM's 64-bit MultiplyByQuantizedMultiplier asserts a shift in [-31, 7]."""
    bad = [int(s) for s in np.asarray(shift).ravel() if not -31 <= int(s) <= 7]
    if bad:
        raise c.refuse(op, f"{what} needs a shift of {bad[0]}; TFLM's 64-bit requantization takes shifts in "
                           "[-31, 7] only")
