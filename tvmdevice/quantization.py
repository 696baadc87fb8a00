"""Quantization parameters as TensorFlow Lite Micro computes them at Prepare time.

Everything here runs once, when an operator is prepared; the per-element
arithmetic lives in C (``tvmdevice/include/tvmdevice/quant.h``) and in the host
reference kernels.  Double rounding throughout: TFLM's default build.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "round_half_away",
    "quantize_multiplier",
    "quantize_multipliers",
    "activation_range",
    "ActivationBoundOverflow",
    "multiply_by_quantized_multiplier",
]

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


def round_half_away(x: float) -> int:
    """Round to nearest, ties away from zero: TFLM's ``TfLiteRound`` (Python's ``round`` ties to even)."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def quantize_multiplier(real_multiplier: float) -> tuple[int, int]:
    """Split ``real_multiplier`` into a Q31 multiplier and a power-of-two shift.

    :returns: ``(multiplier, shift)`` with ``real ~= multiplier * 2**(shift - 31)``;
        ``shift`` is positive for a left shift.  Zero maps to ``(0, 0)``.
    """
    if real_multiplier == 0.0:
        return 0, 0
    mantissa, shift = math.frexp(real_multiplier)
    q = round_half_away(mantissa * (1 << 31))
    if q == (1 << 31):
        q //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q, shift


def quantize_multipliers(real_multipliers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vector form of :func:`quantize_multiplier` (per-channel requantization).

    :returns: int32 multipliers and int32 shifts, one per channel.
    """
    pairs = [quantize_multiplier(float(r)) for r in np.asarray(real_multipliers, np.float64).ravel()]
    mult = np.array([p[0] for p in pairs], dtype=np.int32)
    shift = np.array([p[1] for p in pairs], dtype=np.int32)
    return mult, shift


_ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


class ActivationBoundOverflow(ValueError):
    """A fused activation's bound, quantized, falls outside int32: TFLM refuses the operator."""

    def __init__(self, activation: str, bound: float, steps: float, scale: float) -> None:
        super().__init__(f"output scale {scale:g} puts the {activation} bound {bound:g} at {steps:.3g} steps, "
                         "outside int32: tflite-micro's CalculateActivationRangeQuantized refuses it "
                         "(no_integer_overflow_from_quantization)")


def activation_range(activation: str, scale: float, zero_point: int,
                     qmin: int = -128, qmax: int = 127) -> tuple[int, int]:
    """The quantized clamp TFLM applies for a fused activation.

    :param activation: one of "NONE", "RELU", "RELU6", "RELU_N1_TO_1".
    :raises ActivationBoundOverflow: when a bound, divided by ``scale``, is outside int32 (TFLM's
        Prepare fails there: its ``Quantize`` compares the rounded float32 quotient with int32's
        limits as floats).
    :raises ValueError: for any other activation.
    """
    if activation not in _ACTIVATIONS:
        raise ValueError(f"unsupported fused activation {activation!r}; expected one of {_ACTIVATIONS}")

    def q(x: float) -> int:
        # TFLM divides in float32 and rounds ties away from zero.
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            quotient = float(np.float32(x) / np.float32(scale))
        if not math.isfinite(quotient):
            raise ActivationBoundOverflow(activation, x, quotient, scale)
        steps = round_half_away(quotient)
        # int32's limits as float32, as TFLM compares them (INT32_MAX becomes 2**31)
        if not -(2**31) <= steps <= 2**31:
            raise ActivationBoundOverflow(activation, x, quotient, scale)
        return zero_point + steps

    if activation == "RELU":
        return max(qmin, q(0.0)), qmax
    if activation == "RELU6":
        return max(qmin, q(0.0)), min(qmax, q(6.0))
    if activation == "RELU_N1_TO_1":
        return max(qmin, q(-1.0)), min(qmax, q(1.0))
    return qmin, qmax


def multiply_by_quantized_multiplier(x: np.ndarray, multiplier: np.ndarray | int,
                                     shift: np.ndarray | int) -> np.ndarray:
    """numpy twin of ``tvmd_multiply_by_quantized_multiplier`` (elementwise, broadcasting).

    :param x: int32 (or int64 holding int32 values) accumulators.
    :returns: int64 array of requantized values (not yet offset or clamped).
    """
    x = np.asarray(x, dtype=np.int64)
    m = np.asarray(multiplier, dtype=np.int64)
    s = np.asarray(shift, dtype=np.int64)
    left = np.where(s > 0, s, 0)
    right = np.where(s > 0, 0, -s)
    # uint32 wrap of the left shift, as the C code does.
    shifted = ((x << left) & 0xFFFFFFFF)
    shifted = np.where(shifted >= 2**31, shifted - 2**32, shifted)
    ab = shifted * m
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    # Truncating division toward zero, not floor.
    num = ab + nudge
    high = np.where(num >= 0, num >> 31, -((-num) >> 31))
    high = np.where((shifted == INT32_MIN) & (m == INT32_MIN), INT32_MAX, high)
    mask = (np.int64(1) << right) - 1
    remainder = high & mask
    threshold = (mask >> 1) + (high < 0)
    return (high >> right) + (remainder > threshold)
