"""Where Vela's RELU, RELU6 and RELU_N1_TO_1 differ from tflite-micro's: the rescale between the input's
and the output's quantization.

When the two quantizations differ, Vela rescales by ``input_scale / output_scale`` divided in single
precision ("Relu requires float division to match TFLite reference kernel", the RELU case of
``tflite_graph_optimiser.cpp``: LiteRT's kernel), then quantised to a 31-bit scale and a shift;
tflite-micro's RELU divides in double precision.  Where the two quantised multipliers rescale some
input (less its zero point) differently, the NPU's result differs from tflite-micro's (measured:
input scale 0.0078125, zero point -17, output scale 0.05: Vela ``0x50000000 >> 33``, tflite-micro
``0x4fffffec >> 33``, 4 of the 256 inputs one step apart), so the device declines such an operator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .mul_scale import _quantise, _rescale

if TYPE_CHECKING:
    from tvmdevice.ir import Graph, Operator

__all__ = ["RELUS", "vela_and_tflm_relu_multipliers", "relu_scale_refusal"]

#: The operators Vela rescales by the single-precision quotient (those of them tvmdevice imports).
RELUS = frozenset({"RELU", "RELU6", "RELU_N1_TO_1"})


def vela_and_tflm_relu_multipliers(s_in: float, s_out: float) -> tuple[tuple[int, int], tuple[int, int]]:
    """The quantised rescale as Vela computes it (float32 quotient) and as tflite-micro does (double)."""
    f_in, f_out = np.float32(s_in), np.float32(s_out)
    return _quantise(float(f_in / f_out)), _quantise(float(f_in) / float(f_out))


def relu_scale_refusal(graph: "Graph", op: "Operator") -> str | None:
    """Why the NPU's rescale would not match tflite-micro's for ``op`` (None when it does, or for another
    operator)."""
    if op.type not in RELUS:
        return None
    src, dst = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    quants = (src.quant, dst.quant)
    if np.dtype(src.dtype) != np.int8 or any(q is None or q.scale.size != 1 for q in quants):
        return None
    s_in, s_out = (float(q.scale[0]) for q in quants)  # type: ignore[union-attr]
    if np.float32(s_in) == np.float32(s_out):
        return None  # equal quantizations: no rescale on either side
    vela, tflm = vela_and_tflm_relu_multipliers(s_in, s_out)
    if vela == tflm:
        return None
    zero_point = int(src.quant.zero_point[0])  # type: ignore[union-attr]
    inputs = np.arange(-128 - zero_point, 128 - zero_point, dtype=np.int64)
    apart = np.flatnonzero(_rescale(inputs, *vela) != _rescale(inputs, *tflm))
    if not apart.size:
        return None
    return (f"the NPU's arithmetic differs from tflite-micro's: Vela's {op.type} rescale {vela[0]:#x} >> {vela[1]} "
            f"(single precision) is not tflite-micro's {tflm[0]:#x} >> {tflm[1]}, which rescale the input "
            f"{int(inputs[apart[0]]) + zero_point} differently")
