"""CONV_2D and DEPTHWISE_CONV_2D: TFLM's conv Prepare (``conv_common.cc``, ``depthwise_conv_common.cc``).

Multipliers follow PopulateConvolutionQuantizationParams:
``input_scale * filter_scale[c] / output_scale`` in double from the float32
scales, one per output channel (a per-tensor filter scale repeated).
Padding is ComputePaddingWithOffset's leading padding.

The bias is not checked against the input and filter scales: for int8
PopulateConvolutionQuantizationParams leaves that check out (it runs only
for uint8), so TFLM accepts and runs a conv whose bias scale disagrees or is
missing, and so does this layer.  An unknown ``quantized_bias_type`` is
refused when the file is read (TFLM refuses it when parsing the options).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, INT32, OpData, Operand, Signature

__all__ = ["ConvData", "SIGNATURE", "DEPTHWISE_SIGNATURE", "validate", "analyze"]

_OPTIONS = ("padding", "stride_h", "stride_w", "dilation_h_factor", "dilation_w_factor", "fused_activation")
_OPERANDS = (Operand("input", INT8), Operand("filter", INT8, constant=True),
             Operand("bias", INT32, constant=True, optional=True))
SIGNATURE = Signature(_OPERANDS, (Operand("output", INT8),), _OPTIONS)
# TFLM's depthwise Prepare reads the bias whenever there are three inputs: a bias given as -1 crashes
# it (LiteRT refuses "optional but was expected"), so the bias is optional only by leaving it off.
DEPTHWISE_SIGNATURE = Signature(_OPERANDS[:2] + (Operand("bias", INT32, constant=True, optional=True,
                                                         may_be_absent=False),),
                                (Operand("output", INT8),), _OPTIONS + ("depth_multiplier",))


@dataclass(frozen=True, eq=False)
class ConvData(OpData):
    """CONV_2D / DEPTHWISE_CONV_2D op data; field names are the C params members'.

    Filters are OHWI for CONV_2D (``[out_ch, filter_h, filter_w, filter_in_ch]``)
    and ``[1, filter_h, filter_w, out_ch]`` for DEPTHWISE_CONV_2D.
    """

    depthwise: bool
    num_inputs: int  # len(op.inputs): 2 (no bias slot) or 3 (bias slot, maybe absent)
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
    filter_in_ch: int
    groups: int  # CONV_2D: in_ch // filter_in_ch; depthwise: 1
    depth_multiplier: int  # depthwise: out_ch // in_ch; CONV_2D: 1
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    pad_h: int
    pad_w: int
    input_offset: int  # -input zero point
    output_offset: int  # output zero point
    act_min: int
    act_max: int
    multiplier: np.ndarray  # int32 [out_ch]
    shift: np.ndarray  # int32 [out_ch], positive = left
    macs: int

    @property
    def borders(self) -> tuple[int, int, int, int]:
        """Rows and columns of padding the windows read ``(top, bottom, left, right)``.

        Top and left are ``pad_h``/``pad_w``; bottom and right follow from the output size (0 when the last
        window ends inside the image).
        """
        def trailing(out: int, stride: int, k: int, dilation: int, size: int, lead: int) -> int:
            return max((out - 1) * stride + (k - 1) * dilation + 1 - size - lead, 0)

        return (self.pad_h, trailing(self.out_h, self.stride_h, self.filter_h, self.dilation_h, self.in_h, self.pad_h),
                self.pad_w, trailing(self.out_w, self.stride_w, self.filter_w, self.dilation_w, self.in_w, self.pad_w))


class _Parts(NamedTuple):
    inp: Tensor
    filt: Tensor
    bias: Tensor | None
    out: Tensor
    geometry: dict


def _parts(graph: Graph, op: Operator) -> _Parts:
    """The operands and geometry, structurally checked."""
    depthwise = op.type == "DEPTHWISE_CONV_2D"
    (inp, filt), (bias,), out = c.operands(graph, op, 2, 1)
    for t, role in ((inp, "input"), (filt, "filter"), (out, "output")):
        if len(t.shape) != 4:
            raise c.malformed(op, f"{role} tensor {t.index} must be 4-D, has shape {list(t.shape)}")
    stride_h, stride_w = c.int_option(op, "stride_h"), c.int_option(op, "stride_w")
    dil_h = c.int_option(op, "dilation_h_factor", default=1)
    dil_w = c.int_option(op, "dilation_w_factor", default=1)
    n, h, w, in_ch = (int(d) for d in inp.shape)
    if depthwise:
        one, kh, kw, out_ch = (int(d) for d in filt.shape)
        if one != 1:
            raise c.malformed(op, f"depthwise filter must have shape [1, KH, KW, C*M], has {list(filt.shape)}")
        if out_ch % in_ch:
            raise c.malformed(op, f"{out_ch} output channels is not a multiple of {in_ch} input channels")
        depth_multiplier, groups, filter_in_ch = out_ch // in_ch, 1, 1
        # TFLM loops over the option's value; one that disagrees with the
        # shapes would index outside the filter.
        declared = op.options.get("depth_multiplier", depth_multiplier)
        if int(declared) != depth_multiplier:
            raise c.malformed(op, f"depth_multiplier {declared} disagrees with the shapes "
                                  f"({in_ch} -> {out_ch} channels)")
    else:
        out_ch, kh, kw, filter_in_ch = (int(d) for d in filt.shape)
        if in_ch % filter_in_ch:
            raise c.malformed(op, f"filter shape {list(filt.shape)}: depth {filter_in_ch} does not fit "
                                  f"{in_ch} input channels")
        groups, depth_multiplier = in_ch // filter_in_ch, 1
        if out_ch % groups:
            raise c.malformed(op, f"filter shape {list(filt.shape)}: {out_ch} filters do not split into "
                                  f"{groups} groups")
    kind = c.padding(op)
    oh, ow = c.out_size(kind, h, kh, stride_h, dil_h), c.out_size(kind, w, kw, stride_w, dil_w)
    if oh <= 0 or ow <= 0:
        raise c.malformed(op, f"the {kh}x{kw} filter (dilation {dil_h}x{dil_w}) does not fit the {h}x{w} input")
    c.check_shape(op, out, (n, oh, ow, out_ch), "output")
    c.bias(op, bias, out_ch)
    geometry = {
        "batches": n, "in_h": h, "in_w": w, "in_ch": in_ch, "out_h": oh, "out_w": ow, "out_ch": out_ch,
        "filter_h": kh, "filter_w": kw, "filter_in_ch": filter_in_ch, "groups": groups,
        "depth_multiplier": depth_multiplier, "stride_h": stride_h, "stride_w": stride_w,
        "dilation_h": dil_h, "dilation_w": dil_w,
        "pad_h": c.leading_padding(op, stride_h, dil_h, h, kh, oh),
        "pad_w": c.leading_padding(op, stride_w, dil_w, w, kw, ow),
    }
    return _Parts(inp, filt, bias, out, geometry)


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, 4-D shapes, options, channel counts, the output shape, the bias."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> ConvData:
    """TFLM's Prepare for CONV_2D or DEPTHWISE_CONV_2D."""
    inp, filt, bias, out, g = _parts(graph, op)
    in_scale, in_zp = c.per_tensor_int8(op, inp, "input")
    out_scale, out_zp = c.per_tensor_int8(op, out, "output")
    depthwise = op.type == "DEPTHWISE_CONV_2D"
    scales = c.filter_scales(op, filt, g["out_ch"], axis=3 if depthwise else 0)
    mult, shift = c.multipliers(op, [in_scale * s / out_scale for s in scales])
    act_min, act_max = c.activation_range(op, op.options.get("fused_activation", "NONE"), out_scale, out_zp)
    taps = g["filter_h"] * g["filter_w"] * (1 if depthwise else g["filter_in_ch"])
    return ConvData(
        op_index=op.index, op_type=op.type, depthwise=depthwise, num_inputs=len(op.inputs),
        has_bias=bias is not None, **g, input_offset=-in_zp, output_offset=out_zp,
        act_min=act_min, act_max=act_max, multiplier=mult, shift=shift,
        macs=g["batches"] * g["out_h"] * g["out_w"] * g["out_ch"] * taps)
