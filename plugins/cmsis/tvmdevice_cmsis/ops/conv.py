"""CONV_2D and DEPTHWISE_CONV_2D: cmsis-nn's weight packing and limits.

The op data (geometry, padding, offsets, per-channel multipliers and shifts,
activation range) is the core's :class:`tvmdevice.ops.conv.ConvData`.  Here
the weights are rearranged, once, for the C loops: CONV_2D pair-interleaved
for the int16 GEMM (``[groups * k_pairs, 2 * ldw]``), DEPTHWISE_CONV_2D as
int16 ``[tap pairs, cp, 2]`` (two taps of a channel side by side), output
channels zero padded to the kernels' blocks.  When the host has a VNNI SIMD level,
CONV_2D also gets the int8 VNNI GEMM's operands (:func:`._common.vnni_plan`).

The M-profile packing (``-mcpu=cortex-m*``) keeps the int8 filter as the
model has it: the kernels read it from their filter buffer, so prepare only
checks the accumulator bound and stores the requantization (one multiplier
and shift when per-tensor).
"""

from __future__ import annotations

import numpy as np
from tvmdevice.ir import Graph, Operator
from tvmdevice.ops import ConvData

from ..kernel_table import GEMM_COLS
from . import _common as c

__all__ = ["prepare_conv", "prepare_depthwise", "prepare_conv_m", "prepare_depthwise_m"]

def _check_geometry(data: ConvData) -> None:
    c.check_extent(data.in_h, data.out_h, data.stride_h, data.filter_h, data.dilation_h)
    c.check_extent(data.in_w, data.out_w, data.stride_w, data.filter_w, data.dilation_w)


def prepare_conv(graph: Graph, op: Operator, data: ConvData) -> c.KernelPlan:
    """CONV_2D: the OHWI filter packed for the GEMM."""
    _check_geometry(data)
    weights = c.constant(graph.tensor(op.inputs[1]), "filter").astype(np.int16)
    return _gemm_plan(data, weights, data.groups)


def _gemm_plan(data: ConvData, weights: np.ndarray, groups: int, vnni: bool = True) -> c.KernelPlan:
    """The GEMM convolution's packing of OHWI ``weights`` (int16) in ``groups`` groups; the VNNI GEMM's
    operands only when ``vnni`` (else a VNNI level runs its base level's int16 GEMM)."""
    out_ch, kh, kw, filter_in_ch = weights.shape
    k = kh * kw * filter_in_ch
    c.check_accumulator(np.abs(weights.reshape(out_ch, k).astype(np.int64)).sum(axis=1))
    per_group = out_ch // groups
    flat = weights.reshape(groups, per_group, k)
    packed = np.concatenate([c.pair_interleaved(flat[g]) for g in range(groups)])
    return c.KernelPlan(
        {"filter_in_ch": filter_in_ch, "groups": groups, "k": k, "k_pairs": (k + 1) // 2,
         "ldw": c.padded(per_group, GEMM_COLS), "q": data, "weights": packed,
         **_vnni_operands(data, weights, groups, vnni)},
        kind="conv")


def _vnni_operands(data: ConvData, weights: np.ndarray, groups: int, vnni: bool) -> dict:
    """The VNNI GEMM's members for OHWI ``weights`` in ``groups`` groups: none unless ``vnni``.

    Ungrouped without width dilation, each filter row's ``kw x cin`` steps are one span of the bordered image, so
    the kernel reads the GEMM's rows in place there: each filter row is padded to whole quads of 4 steps with zero
    weights (``vnni_segment_quads`` of them; the bytes read past a row's taps then add nothing).  Otherwise the
    rows are copied (im2col) and the steps packed whole, ``ceil(k / 4)`` quads (``vnni_segment_quads`` 0).

    Every CONV_2D (and one-input-channel DEPTHWISE_CONV_2D) gets them: measured on an AMD EPYC with AVX-512 VNNI
    (the executor's per-operator profile, medians, minimum of 7 interleaved rounds), the VNNI GEMM against its
    base level's int16 GEMM won on every convolution of the shared and the bench's models -- kws_dscnn's 10x4 /2
    first layer 2.0x, its 64->64 pointwise 2.2x, resnet_style's 16->16 3x3 2.2x, mobilenet_v1_block's 8->16
    pointwise 4.5x, mobilenet_v2_stem's 3->32 3x3 /2 3.5x, micro_speech's one-channel 10x8 /2 depthwise 3.4x
    (7.3 against 24.6 us) -- and on the im2col shapes tried (3x3 with 2 and 4 groups 1.4x and 1.2x, width
    dilation 2 with 16 and 3 channels 1.3x and 1.2x, a 6->24 pointwise 1.4x).  Before the rows were read in place
    (every convolution through im2col) the int16 GEMM won where it read its rows in place and the VNNI GEMM did
    not (micro_speech's depthwise, 21.7 against 17.9 us).  AVX-VNNI against AVX2 is not measured (no such CPU
    here); it runs the same in-place rows."""
    if not vnni:
        return {"weights_vnni": None, "vnni_correction": None, "vnni_segment_quads": 0}
    out_ch, kh, kw, cin = weights.shape
    if groups != 1 or data.dilation_w != 1:
        return {**c.vnni_plan(weights.reshape(out_ch, -1), data.input_offset, groups), "vnni_segment_quads": 0}
    quads = -(-kw * cin // 4)
    rows = np.zeros((out_ch, kh, 4 * quads), dtype=weights.dtype)
    rows[:, :, :kw * cin] = weights.reshape(out_ch, kh, kw * cin)
    return {**c.vnni_plan(rows.reshape(out_ch, -1), data.input_offset), "vnni_segment_quads": quads}


def prepare_depthwise(graph: Graph, op: Operator, data: ConvData) -> c.KernelPlan:
    """DEPTHWISE_CONV_2D: int16 tap pairs, or the GEMM for one input channel."""
    _check_geometry(data)
    kh, kw, out_ch = data.filter_h, data.filter_w, data.out_ch
    weights = c.constant(graph.tensor(op.inputs[1]), "filter").astype(np.int16).reshape(kh * kw, out_ch)
    if data.in_ch == 1:
        # One input channel: every output channel sees the same taps, so this
        # is an ordinary convolution (OHWI filter [out_ch, KH, KW, 1]) with the
        # same sums, and runs on the GEMM instead of channel-vector loops.
        filter_ohwi = np.ascontiguousarray(weights.T.reshape(out_ch, kh, kw, 1))
        return _gemm_plan(data, filter_ohwi, groups=1)
    c.check_accumulator(np.abs(weights.astype(np.int64)).sum(axis=0))
    return c.KernelPlan({"cp": c.padded(out_ch), "q": data, "weights": tap_pairs(weights)})


def tap_pairs(taps: np.ndarray) -> np.ndarray:
    """``[taps, out_ch]`` depthwise weights as int16 ``[(taps + 1) // 2, cp, 2]``.

    Element ``[p, c, q]`` is ``taps[2 * p + q, c]``: two taps of one channel
    side by side (what one 2 x 16-bit multiply-add consumes), zero where
    ``c >= out_ch`` or ``2 * p + q >= taps``.
    """
    n, out_ch = taps.shape
    full = np.zeros((n + (n & 1), c.padded(out_ch)), dtype=np.int16)
    full[:n, :out_ch] = taps
    return np.ascontiguousarray(full.reshape(-1, 2, full.shape[1]).transpose(0, 2, 1))


def prepare_conv_m(graph: Graph, op: Operator, data: ConvData) -> c.KernelPlan:
    """CONV_2D, M-profile packing: the OHWI filter stays in the model; im2col columns of k values."""
    _check_geometry(data)
    weights = c.constant(graph.tensor(op.inputs[1]), "filter")
    out_ch = weights.shape[0]
    k = int(np.prod(weights.shape[1:], dtype=np.int64))
    c.check_accumulator(np.abs(weights.reshape(out_ch, k).astype(np.int64)).sum(axis=1))
    return c.KernelPlan({"filter_in_ch": int(weights.shape[3]), "k": k, "q": data,
                         **c.channel_quant(data.multiplier, data.shift)})


def prepare_depthwise_m(graph: Graph, op: Operator, data: ConvData) -> c.KernelPlan:
    """DEPTHWISE_CONV_2D, M-profile packing: the [1, KH, KW, out_ch] filter stays in the model."""
    _check_geometry(data)
    weights = c.constant(graph.tensor(op.inputs[1]), "filter").reshape(data.filter_h * data.filter_w, data.out_ch)
    c.check_accumulator(np.abs(weights.astype(np.int64)).sum(axis=0))
    return c.KernelPlan({"q": data, **c.channel_quant(data.multiplier, data.shift)})
