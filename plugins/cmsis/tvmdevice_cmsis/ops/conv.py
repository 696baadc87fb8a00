"""CONV_2D and DEPTHWISE_CONV_2D: validation and parameters (TFLM's Prepare).

Multipliers follow TFLM's PopulateConvolutionQuantizationParams:
``input_scale * filter_scale[c] / output_scale`` in double from the float32
scales.  The weights are rearranged here, once, for the C loops: CONV_2D
pair-interleaved for the int16 GEMM (``[groups * k_pairs, 2 * ldw]``),
DEPTHWISE_CONV_2D as float32 ``[taps, cp]`` (exact: small integers), output
channels zero padded to the kernels' blocks.
"""

from __future__ import annotations

import numpy as np

from tvmdevice.aot.ir import Graph, Operator

from . import _common as c

__all__ = ["analyze_conv", "analyze_depthwise"]

# |input - zero point| <= 255 for int8 data and an int8 zero point.
_MAX_ABS_INPUT = 255


def _geometry(graph: Graph, op: Operator):
    ins, out = c.io(graph, op, 2, 3)
    inp, filt = ins[0], ins[1]
    bias = ins[2] if len(ins) == 3 else None
    for t, role in ((inp, "input"), (filt, "filter"), (out, "output")):
        if len(t.shape) != 4:
            raise c.invalid(op, f"{role} tensor {t.index} must be 4-D, has shape {list(t.shape)}")
    o = op.options
    stride_h, stride_w = c.positive(op, o, "stride_h", "stride_w")
    dil_h, dil_w = c.positive(op, {"dilation_h_factor": o.get("dilation_h_factor", 1),
                                   "dilation_w_factor": o.get("dilation_w_factor", 1)},
                              "dilation_h_factor", "dilation_w_factor")
    padding = c.padding_kind(op)
    n, h, w, in_ch = (int(d) for d in inp.shape)
    _, kh, kw, _ = (int(d) for d in filt.shape)
    oh = c.out_size(padding, h, kh, stride_h, dil_h)
    ow = c.out_size(padding, w, kw, stride_w, dil_w)
    if oh <= 0 or ow <= 0:
        raise c.invalid(op, f"the {kh}x{kw} filter (dilation {dil_h}x{dil_w}) does not fit the {h}x{w} input")
    c.check_extent(op, h, oh, stride_h, kh, dil_h)
    c.check_extent(op, w, ow, stride_w, kw, dil_w)
    geometry = {
        "batches": n, "in_h": h, "in_w": w, "in_ch": in_ch, "out_h": oh, "out_w": ow,
        "filter_h": kh, "filter_w": kw, "stride_h": stride_h, "stride_w": stride_w,
        "dilation_h": dil_h, "dilation_w": dil_w,
        "pad_h": c.leading_padding(stride_h, dil_h, h, kh, oh),
        "pad_w": c.leading_padding(stride_w, dil_w, w, kw, ow),
    }
    return inp, filt, bias, out, geometry


def _quant(op: Operator, inp, filt, out, channels: int, axis: int) -> dict:
    in_scale, in_zp = c.int8_quant(op, inp, "input")
    out_scale, out_zp = c.int8_quant(op, out, "output")
    scales = c.filter_scales(op, filt, channels, axis)
    mult, shift = c.multipliers(op, [in_scale * s / out_scale for s in scales])
    act_min, act_max = c.activation_range(op, op.options.get("fused_activation", "NONE"), out_scale, out_zp)
    return {"input_offset": -in_zp, "output_offset": out_zp, "act_min": act_min, "act_max": act_max,
            "multiplier": mult, "shift": shift}


def analyze_conv(graph: Graph, op: Operator) -> c.KernelSpec:
    """Validate a CONV_2D operator and compute its kernel spec."""
    inp, filt, bias, out, g = _geometry(graph, op)
    out_ch, kh, kw, filter_in_ch = (int(d) for d in filt.shape)
    if g["in_ch"] % filter_in_ch:
        raise c.invalid(op, f"filter depth {filter_in_ch} does not divide {g['in_ch']} input channels")
    groups = g["in_ch"] // filter_in_ch
    if out_ch % groups:
        raise c.invalid(op, f"{out_ch} filters do not split into {groups} groups")
    c.check_output_shape(op, out, (g["batches"], g["out_h"], g["out_w"], out_ch))
    c.bias_spec(op, bias, out_ch)
    q = _quant(op, inp, filt, out, out_ch, axis=0)
    weights = c.constant(op, filt, "filter").astype(np.int16)
    return _conv_spec(op, inp, filt, bias, out, g, q, weights, groups)


def _conv_spec(op: Operator, inp, filt, bias, out, g: dict, q: dict, weights: np.ndarray,
               groups: int) -> c.KernelSpec:
    """The GEMM convolution's spec for OHWI ``weights`` (int16) in ``groups`` groups."""
    out_ch, kh, kw, filter_in_ch = weights.shape
    k = kh * kw * filter_in_ch
    c.check_accumulator(op, np.abs(weights.reshape(out_ch, k).astype(np.int64)).sum(axis=1), _MAX_ABS_INPUT)
    per_group = out_ch // groups
    flat = weights.reshape(groups, per_group, k)
    interleaved = np.concatenate([c.pair_interleaved(flat[gi]) for gi in range(groups)])
    fields = dict(g, num_inputs=len(op.inputs), out_ch=out_ch, filter_in_ch=filter_in_ch, groups=groups, k=k,
                  k_pairs=(k + 1) // 2, ldw=c.padded(per_group, c.GEMM_COLS),
                  macs=g["batches"] * g["out_h"] * g["out_w"] * out_ch * k,
                  **{key: q[key] for key in ("input_offset", "output_offset", "act_min", "act_max")})
    return c.KernelSpec(
        kind="conv", name="tvmd_cmsis_conv_s8", fields=fields,
        arrays={"weights": interleaved, "multiplier": q["multiplier"], "shift": q["shift"]},
        buffers=c.weighted_buffers(op, inp, filt, bias, out, "filter"),
    )


def analyze_depthwise(graph: Graph, op: Operator) -> c.KernelSpec:
    """Validate a DEPTHWISE_CONV_2D operator and compute its kernel spec."""
    inp, filt, bias, out, g = _geometry(graph, op)
    one, kh, kw, out_ch = (int(d) for d in filt.shape)
    if one != 1:
        raise c.invalid(op, f"depthwise filter must have shape [1, KH, KW, C*M], has {list(filt.shape)}")
    if out_ch % g["in_ch"]:
        raise c.invalid(op, f"{out_ch} output channels are not a multiple of {g['in_ch']} input channels")
    depth_multiplier = out_ch // g["in_ch"]
    declared = op.options.get("depth_multiplier", depth_multiplier)
    # TFLM loops over the declared multiplier; one that disagrees with the
    # shapes would index outside the filter, so it is refused.
    if int(declared) != depth_multiplier:
        raise c.invalid(op, f"depth_multiplier {declared} disagrees with the shapes "
                            f"({g['in_ch']} -> {out_ch} channels)")
    c.check_output_shape(op, out, (g["batches"], g["out_h"], g["out_w"], out_ch))
    c.bias_spec(op, bias, out_ch)
    q = _quant(op, inp, filt, out, out_ch, axis=3)
    weights = c.constant(op, filt, "filter").astype(np.int16).reshape(kh * kw, out_ch)
    if g["in_ch"] == 1:
        # One input channel: every output channel sees the same taps, so this
        # is an ordinary convolution (OHWI filter [out_ch, KH, KW, 1]) with the
        # same sums, and runs on the GEMM instead of channel-vector loops.
        ohwi = np.ascontiguousarray(weights.T.reshape(out_ch, kh, kw, 1))
        return _conv_spec(op, inp, filt, bias, out, g, q, ohwi, groups=1)
    c.check_accumulator(op, np.abs(weights.astype(np.int64)).sum(axis=0), _MAX_ABS_INPUT)
    cp = c.padded(out_ch)
    if g["in_h"] * g["in_w"] * cp >= 2**29:
        # The kernel's float image copy (and its int32 offsets) must stay small.
        raise c.unsupported(op, f"a {g['in_h']}x{g['in_w']} image with {out_ch} output channels is too large")
    taps = np.zeros((kh * kw, cp), dtype=np.float32)
    taps[:, :out_ch] = weights
    fields = dict(g, num_inputs=len(op.inputs), out_ch=out_ch, depth_multiplier=depth_multiplier, cp=cp,
                  macs=g["batches"] * g["out_h"] * g["out_w"] * out_ch * kh * kw,
                  **{key: q[key] for key in ("input_offset", "output_offset", "act_min", "act_max")})
    return c.KernelSpec(
        kind="depthwise_conv", name="tvmd_cmsis_depthwise_conv_s8", fields=fields,
        arrays={"weights": taps, "multiplier": q["multiplier"], "shift": q["shift"]},
        buffers=c.weighted_buffers(op, inp, filt, bias, out, "filter"),
    )
