"""Where Vela's MUL differs from tflite-micro's: the OFM scale.

Vela (``ElementwiseMulScale`` in ``ethosu/regor/common/scaling.hpp``) computes a MUL's output
rescale ``input_scale * input2_scale / output_scale`` in single precision, then quantises it to a
31-bit scale and a shift; tflite-micro's MUL (``QuantizeMultiplier``) computes the same quotient in
double precision.  The two quantised multipliers differ for most scales, usually without changing
a result; where they rescale some product of two int8 operands (less their zero points:
|product| <= 255 * 255) differently, the NPU's results can differ from tflite-micro's (measured:
scales 0.003, 0.003 and 0.000576 give Vela 2^30 >> 36, tflite-micro 0x7fffffd9 >> 37, and one
element in 228 one step apart), so the device declines such a MUL.  For int16 operands (products up to
2^30, too many to compare one by one) it declines a MUL whenever the two quantised multipliers differ.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tvmdevice.ir import Graph, Operator


def _quantise(value: float) -> tuple[int, int]:
    """A positive scale as a 31-bit significand and a right shift (rounding half away from zero)."""
    significand, exponent = math.frexp(value)
    q = int(math.floor(abs(significand) * (1 << 31) + 0.5))
    if q == 1 << 31:
        q, exponent = q // 2, exponent + 1
    return q, 31 - exponent


def vela_and_tflm_multipliers(s1: float, s2: float, so: float) -> tuple[tuple[int, int], tuple[int, int]]:
    """The quantised MUL output rescale as Vela computes it (float32) and as tflite-micro does (double)."""
    f1, f2, fo = np.float32(s1), np.float32(s2), np.float32(so)
    vela = float(np.float32(f1 * f2) / fo)
    tflm = float(f1) * float(f2) / float(fo)
    return _quantise(vela), _quantise(tflm)


def _rescale(products: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """The OFM rescale with TFL rounding (csrc/ethosu_fmap.c, ethosu_apply_scale)."""
    rounding = np.int64(1 << (shift - 1)) if shift > 0 else np.int64(0)
    if shift > 31:
        rounding = rounding + np.where(products >= 0, np.int64(1 << 30), np.int64(-(1 << 30)))
    return (products * np.int64(multiplier) + rounding) >> np.int64(shift)


_PRODUCTS = np.arange(-255 * 255, 255 * 255 + 1, dtype=np.int64)


def mul_scale_refusal(graph: "Graph", op: "Operator") -> str | None:
    """Why the NPU's MUL would not match tflite-micro's for ``op`` (None when it does, or for another operator)."""
    if op.type != "MUL":
        return None
    tensors = [graph.tensors[t] for t in (*op.inputs[:2], op.outputs[0])]
    if any(t.quant is None or t.quant.scale.size != 1 for t in tensors):
        return None
    s1, s2, so = (float(t.quant.scale[0]) for t in tensors)  # type: ignore[union-attr]
    vela, tflm = vela_and_tflm_multipliers(s1, s2, so)
    if any(np.dtype(t.dtype) != np.int8 for t in tensors):
        return None if vela == tflm else _differs(vela, tflm, None)
    if vela == tflm or max(vela[1], tflm[1]) > 62:
        return None if vela == tflm else _differs(vela, tflm, None)
    ours, theirs = _rescale(_PRODUCTS, *vela), _rescale(_PRODUCTS, *tflm)
    apart = np.flatnonzero(ours != theirs)
    return _differs(vela, tflm, int(_PRODUCTS[apart[0]])) if apart.size else None


def _differs(vela: tuple[int, int], tflm: tuple[int, int], product: int | None) -> str:
    at = "" if product is None else f", which rescale the product {product} differently"
    return (f"the NPU's arithmetic differs from tflite-micro's: Vela's MUL scale {vela[0]:#x} >> {vela[1]} "
            f"(single precision) is not tflite-micro's {tflm[0]:#x} >> {tflm[1]}{at}")
