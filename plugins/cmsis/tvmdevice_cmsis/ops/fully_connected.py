"""FULLY_CONNECTED: cmsis-nn's weight packing.

The op data (offsets, the weights offset, per-tensor or per-channel
multipliers and shifts, activation range) is the core's
:class:`tvmdevice.ops.fully_connected.FullyConnectedData`.  Here the weights
offset is added to the weights, once, while they are rearranged into the
int16 pair-interleaved layout of the C GEMM.

At batch 1 every weight is read once per run.  There, when every weight
(offset added) is in [-127, 127] -- TFLite's symmetric int8 weights always
are -- they are packed as int8 panels instead (``_common.panels_s8``) and the
kernel multiplies the raw int8 input:
``sum((x + input_offset) * w) = sum(x * w) + input_offset * sum(w)``, the
second term computed here once per column (``offset_sums``).  The AVX2 path
multiplies |x| by w carrying x's sign (vpsignb, vpmaddubsw), exact only
because no weight is -128; such weights take the GEMM.

On a VNNI SIMD level the same panels are read with vpdpbusd, which takes
unsigned inputs: the kernel multiplies ``u = x + 128`` and starts each column
at ``vnni_correction = (input_offset - 128) * sum(w)`` (packed, beside the
panels, when the host has a VNNI level or the build is emulated).

With batch rows, when the host has a VNNI SIMD level, the int8 VNNI GEMM's
operands are packed too (:func:`._common.vnni_plan`).

The M-profile packing (``-mcpu=cortex-m*``) leaves the weights in the model
(the kernel reads them from its weights buffer and adds the offset as it
goes).
"""

from __future__ import annotations

import numpy as np
from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import FullyConnectedData

from ..kernel_table import GEMM_COLS, GEMV_COLS, GEMV_DEPTH
from . import _common as c

__all__ = ["prepare", "prepare_m"]

def prepare(graph: Graph, op: Operator, data: FullyConnectedData) -> c.KernelPlan:
    """The weights, offset added, packed for the GEMM."""
    weights = c.constant(graph.tensor(op.inputs[1]), "weights").astype(np.int16) + np.int16(data.filter_offset)
    # |weight + weights offset| <= 255 too, so the input bound is the same.
    c.check_accumulator(np.abs(weights.astype(np.int64)).sum(axis=1))
    if data.batches == 1 and weights.size and -127 <= weights.min() and weights.max() <= 127:
        offset_sums = c.offset_column_sums(weights, data.input_offset, c.padded(data.out_ch, GEMV_COLS))
        # The VNNI GEMV's start of each sum: (input_offset - 128) x sum(w), as the VNNI GEMM's correction.
        vnni_correction = (c.offset_column_sums(weights, int(data.input_offset) - 128, c.padded(data.out_ch, GEMV_COLS))
                           if c.vnni_packing() else None)
        packed = {"weights": None, "weights_s8": c.panels_s8(weights),
                  "depth_s8": c.padded(data.accum_depth, GEMV_DEPTH), "offset_sums": offset_sums,
                  "vnni_correction": vnni_correction}
    else:
        packed = {"weights": c.pair_interleaved(weights), "weights_s8": None, "depth_s8": 0, "offset_sums": None,
                  **c.vnni_plan(weights, data.input_offset)}
    return c.KernelPlan({"k_pairs": (data.accum_depth + 1) // 2, "ldw": c.padded(data.out_ch, GEMM_COLS),
                         "q": data, "weights_vnni": None, "vnni_correction": None, **packed})


def prepare_m(graph: Graph, op: Operator, data: FullyConnectedData) -> c.KernelPlan:
    """M-profile packing: the int8 weights stay in the model; one multiplier and shift when per-tensor."""
    weights = c.constant(graph.tensor(op.inputs[1]), "weights").astype(np.int64) + data.filter_offset
    c.check_accumulator(np.abs(weights.reshape(data.out_ch, data.accum_depth)).sum(axis=1))
    return c.KernelPlan({"q": data, **c.channel_quant(data.multiplier, data.shift)})
