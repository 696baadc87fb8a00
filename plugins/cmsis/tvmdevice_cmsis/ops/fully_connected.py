"""FULLY_CONNECTED: validation and parameters (TFLM's Prepare).

Per-tensor weights use TFLM's GetQuantizedConvolutionMultipler, which
multiplies input and weights scales in float32 before widening, and keep the
weights zero point (added to the weights here, once, while rearranging them
into the int16 pair-interleaved layout of the C GEMM).  Per-channel weights
use ``input_scale * scale[c] / output_scale`` in double and must have zero
points of 0, as in TFLM.
"""

from __future__ import annotations

import numpy as np

from tvmdevice.aot.ir import Graph, Operator

from . import _common as c

__all__ = ["analyze_fully_connected"]


def analyze_fully_connected(graph: Graph, op: Operator) -> c.KernelSpec:
    """Validate a FULLY_CONNECTED operator and compute its kernel spec."""
    ins, out = c.io(graph, op, 2, 3)
    inp, filt = ins[0], ins[1]
    bias = ins[2] if len(ins) == 3 else None
    if len(filt.shape) != 2:
        raise c.invalid(op, f"weights tensor {filt.index} must be 2-D, has shape {list(filt.shape)}")
    out_ch, depth = (int(d) for d in filt.shape)
    if int(out.shape[-1]) != out_ch:
        raise c.invalid(op, f"output tensor {out.index} shape {list(out.shape)} must end in {out_ch}")
    batches = c.count(tuple(out.shape[:-1]))
    if c.count(tuple(inp.shape)) != batches * depth:
        raise c.invalid(op, f"input tensor {inp.index} has {c.count(tuple(inp.shape))} values, expected "
                            f"{batches} batches x {depth}")
    c.bias_spec(op, bias, out_ch)
    in_scale, in_zp = c.int8_quant(op, inp, "input")
    out_scale, out_zp = c.int8_quant(op, out, "output")
    if np.dtype(filt.dtype) != np.int8 or filt.quant is None or filt.quant.scale.size == 0:
        raise c.unsupported(op, f"weights tensor {filt.index} must be quantized int8")
    q = filt.quant
    if q.scale.size > 1:
        scales = c.filter_scales(op, filt, out_ch, axis=0)
        if len(out.shape) != 2:
            # TFLM's per-channel kernel reads batches from dimension 0 only.
            raise c.unsupported(op, "per-channel weights need a 2-D output")
        real = [in_scale * s / out_scale for s in scales]
        filter_offset = 0
    else:
        filter_zp = int(q.zero_point[0])
        if not -128 <= filter_zp <= 127:
            raise c.invalid(op, f"weights zero point {filter_zp} is outside the int8 range")
        product = float(np.float32(in_scale) * np.float32(q.scale[0]))  # float32, as TFLM
        real = [product / out_scale] * out_ch
        filter_offset = -filter_zp
    mult, shift = c.multipliers(op, real)
    weights = c.constant(op, filt, "weights").astype(np.int16) + np.int16(filter_offset)
    c.check_accumulator(op, np.abs(weights.astype(np.int64)).sum(axis=1), 255)
    act_min, act_max = c.activation_range(op, op.options.get("fused_activation", "NONE"), out_scale, out_zp)
    fields = {"num_inputs": len(op.inputs), "batches": batches, "accum_depth": depth, "out_ch": out_ch,
              "k_pairs": (depth + 1) // 2, "ldw": c.padded(out_ch, c.GEMM_COLS),
              "input_offset": -in_zp, "output_offset": out_zp, "act_min": act_min, "act_max": act_max,
              "macs": batches * out_ch * depth}
    return c.KernelSpec(
        kind="fully_connected", name="tvmd_cmsis_fully_connected_s8", fields=fields,
        arrays={"weights": c.pair_interleaved(weights), "multiplier": mult, "shift": shift},
        buffers=c.weighted_buffers(op, inp, filt, bias, out, "weights"),
    )
