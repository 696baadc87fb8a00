"""FULLY_CONNECTED: the params struct and cmsis-nn's weight packing.

The op data (offsets, the weights offset, per-tensor or per-channel
multipliers and shifts, activation range) is the core's
:class:`tvmdevice.ops.fully_connected.FullyConnectedData`.  Here the weights
offset is added to the weights, once, while they are rearranged into the
int16 pair-interleaved layout of the C GEMM.
"""

from __future__ import annotations

import numpy as np

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.layout import Field, Layout
from tvmdevice.ops import FullyConnectedData

from . import _common as c

__all__ = ["PARAMS", "prepare"]

PARAMS = Layout("tvmd_cmsis_fully_connected_params_t", (
    Field("kind", "uint32_t", doc="TVMD_CMSIS_KIND_FULLY_CONNECTED"),
    Field("num_inputs", "int32_t", doc="2 (no bias slot) or 3 (bias slot, NULL when absent)"),
    *c.int32_fields("batches", "accum_depth", "out_ch"),
    Field("k_pairs", "int32_t", doc="(accum_depth + 1) / 2"),
    Field("ldw", "int32_t", doc="out_ch rounded up to TVMD_CMSIS_GEMM_COLS"),
    Field("q", c.QUANT),
    Field("macs", "uint64_t", doc="multiply-accumulates of one call"),
    Field("weights", "const int16_t*", doc="[k_pairs][ldw][2]: weight + weights offset, pair-interleaved, zero padded"),
    Field("multiplier", "const int32_t*", doc="[out_ch]; equal entries when per-tensor"),
    Field("shift", "const int32_t*", doc="[out_ch]"),
), doc="FULLY_CONNECTED, [batches, accum_depth] x [out_ch, accum_depth]^T.")


def prepare(graph: Graph, op: Operator, data: FullyConnectedData) -> c.KernelPlan:
    """The weights, offset added, packed for the GEMM."""
    weights = c.constant(graph.tensor(op.inputs[1]), "weights").astype(np.int16) + np.int16(data.filter_offset)
    # |weight + weights offset| <= 255 too, so the input bound is the same.
    c.check_accumulator(np.abs(weights.astype(np.int64)).sum(axis=1))
    return c.KernelPlan({"k_pairs": (data.accum_depth + 1) // 2, "ldw": c.padded(data.out_ch, c.GEMM_COLS),
                         "q": data, "weights": c.pair_interleaved(weights)})
