"""Where an int16x8 convolution's accumulator differs: tflite-micro's 32 bits against the NPU's 40.

With a 64-bit bias tflite-micro accumulates an int16x8 CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED
in 64 bits; with a 32-bit bias its reference kernels (``ConvPerChannel<AccumScalar>``) accumulate
in the bias's type, 32 bits, which a deep window of large inputs overflows (undefined in C++; the
build wraps).  Vela gives the NPU a 40-bit accumulator (``ACC_FORMAT`` INT_40BIT) for every 16-bit
IFM, which does not.  Measured: a FULLY_CONNECTED of depth 1200 with a 32-bit bias, inputs ±32767 by
the weights' signs (sum of products 2,481,546,460): the NPU gives 32767, tflite-micro -32768.  So the
device declines such an operator when some input could take the sum beyond 32 bits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tvmdevice.ir import Graph, Operator

_CONVOLUTIONS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


def accumulator_refusal(graph: "Graph", op: "Operator") -> str | None:
    """Why the NPU's 40-bit accumulator would not match tflite-micro's 32-bit one for ``op`` (None when
    it would, or for another operator)."""
    if op.type not in _CONVOLUTIONS or len(op.inputs) < 3 or op.inputs[2] < 0:
        return None
    x, w, b = (graph.tensors[t] for t in op.inputs[:3])
    if np.dtype(x.dtype) != np.int16 or np.dtype(b.dtype) != np.int32 or w.data is None or b.data is None:
        return None
    zero_point = int(x.quant.zero_point[0]) if x.quant is not None and x.quant.zero_point.size else 0
    magnitude = max(32767 - zero_point, zero_point + 32768)
    weights = np.abs(np.asarray(w.data, dtype=np.int64))
    # the largest sum of |weight| an output element's window meets, per output channel
    per_channel = weights.sum(axis=tuple(range(weights.ndim - 1))) if op.type == "DEPTHWISE_CONV_2D" else (
        weights.reshape(weights.shape[0], -1).sum(axis=1))
    bound = int((per_channel * magnitude + np.abs(np.asarray(b.data, dtype=np.int64))).max())
    if bound < 2**31:
        return None
    return ("the NPU's arithmetic differs from tflite-micro's: its 40-bit accumulator holds sums that "
            f"tflite-micro's 32-bit one (an int16 {op.type} with a 32-bit bias) overflows (up to {bound})")
