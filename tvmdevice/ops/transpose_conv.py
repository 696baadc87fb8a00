"""TRANSPOSE_CONV, int8: TFLM's ``transpose_conv.cc`` Prepare.

Inputs are the output shape (a constant TFLM ignores beyond its tensor's
shape), the OHWI filter, the NHWC input and an optional int32 bias.  The
multipliers are PopulateConvolutionQuantizationParams' (per channel along
axis 0); the padding is ComputePaddingHeightWidth over the *output* size
with dilation 1 (the forward convolution's).  TFLM's int8 kernel ignores
the filter zero point, so a non-zero one is refused rather than run wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, INT32, OpData, Operand, Signature

__all__ = ["TransposeConvData", "SIGNATURE", "validate", "analyze"]

SIGNATURE = Signature(
    (Operand("output_shape", INT32, constant=True), Operand("filter", INT8, constant=True), Operand("input", INT8),
     Operand("bias", INT32, constant=True, optional=True)),
    (Operand("output", INT8),), ("padding", "stride_h", "stride_w", "fused_activation"))


@dataclass(frozen=True, eq=False)
class TransposeConvData(OpData):
    """TRANSPOSE_CONV op data; the filter is ``[out_ch, filter_h, filter_w, in_ch]``."""

    num_inputs: int  # 3 (no bias slot) or 4
    has_bias: bool
    batches: int
    in_h: int
    in_w: int
    in_ch: int
    out_h: int
    out_w: int
    out_ch: int
    filter_h: int
    filter_w: int
    stride_h: int
    stride_w: int
    pad_h: int
    pad_w: int
    input_offset: int  # -input zero point
    output_offset: int
    act_min: int
    act_max: int
    multiplier: np.ndarray  # int32 [out_ch]
    shift: np.ndarray
    macs: int


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, Tensor | None, Tensor, dict]:
    (shape_t, filt, inp), (bias,), out = c.operands(graph, op, 3, 1)
    for t, role in ((filt, "filter"), (inp, "input"), (out, "output")):
        if len(t.shape) != 4:
            raise c.malformed(op, f"{role} tensor {t.index} must be 4-D, has shape {list(t.shape)}")
    if shape_t.data is None or [int(v) for v in np.asarray(shape_t.data).reshape(-1)] != [int(d) for d in out.shape]:
        raise c.malformed(op, f"output shape tensor {shape_t.index} must be a constant equal to the output's shape "
                              f"{list(out.shape)}")
    n, h, w, in_ch = (int(d) for d in inp.shape)
    out_ch, kh, kw, filter_in = (int(d) for d in filt.shape)
    on, oh, ow, oc = (int(d) for d in out.shape)
    if filter_in != in_ch or oc != out_ch or on != n:
        raise c.malformed(op, f"filter {list(filt.shape)}, input {list(inp.shape)} and output {list(out.shape)} "
                              f"disagree")
    sh, sw = c.int_option(op, "stride_h"), c.int_option(op, "stride_w")
    kind = c.padding(op)
    c.bias(op, bias, out_ch)
    fh, fw = c.out_size(kind, oh, kh, sh), c.out_size(kind, ow, kw, sw)
    geometry = {"batches": n, "in_h": h, "in_w": w, "in_ch": in_ch, "out_h": oh, "out_w": ow, "out_ch": out_ch,
                "filter_h": kh, "filter_w": kw, "stride_h": sh, "stride_w": sw,
                "pad_h": c.leading_padding(op, sh, 1, oh, kh, fh), "pad_w": c.leading_padding(op, sw, 1, ow, kw, fw)}
    return filt, inp, bias, out, geometry


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, 4-D shapes that agree, the output shape constant, options, the bias."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> TransposeConvData:
    """TFLM's Prepare for int8 TRANSPOSE_CONV."""
    filt, inp, bias, out, g = _parts(graph, op)
    s_in, z_in = c.per_tensor_int8(op, inp, "input")
    s_out, z_out = c.per_tensor_int8(op, out, "output")
    scales = c.filter_scales(op, filt, g["out_ch"], axis=0)
    mult, shift = c.multipliers(op, [s_in * s / s_out for s in scales])
    act_min, act_max = c.activation_range(op, op.options.get("fused_activation", "NONE"), s_out, z_out)
    return TransposeConvData(
        op_index=op.index, op_type=op.type, num_inputs=len(op.inputs), has_bias=bias is not None, **g,
        input_offset=-z_in, output_offset=z_out, act_min=act_min, act_max=act_max, multiplier=mult, shift=shift,
        macs=g["batches"] * g["in_h"] * g["in_w"] * g["in_ch"] * g["filter_h"] * g["filter_w"] * g["out_ch"])
