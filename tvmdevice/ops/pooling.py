"""AVERAGE_POOL_2D and MAX_POOL_2D: TFLM's PoolingPrepare (``pooling_common.cc``).

No rescaling happens in TFLM's int8 pooling: input and output must share
quantization by TFLM's rule (:func:`tvmdevice.ops._checks.same_quantization`);
only the fused activation clamp applies.
"""

from __future__ import annotations

from dataclasses import dataclass

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops._base import INT8, OpData, Operand, Signature

__all__ = ["PoolData", "SIGNATURE", "validate", "analyze"]

SIGNATURE = Signature((Operand("input", INT8),), (Operand("output", INT8),),
                      ("padding", "stride_h", "stride_w", "filter_height", "filter_width", "fused_activation"))


@dataclass(frozen=True)
class PoolData(OpData):
    """Pooling op data (NHWC input and output)."""

    average: bool
    batches: int
    in_h: int
    in_w: int
    channels: int
    out_h: int
    out_w: int
    filter_h: int
    filter_w: int
    stride_h: int
    stride_w: int
    pad_h: int
    pad_w: int
    act_min: int
    act_max: int


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, dict]:
    (inp,), _, out = c.operands(graph, op, 1)
    if len(inp.shape) != 4:
        raise c.malformed(op, f"input tensor {inp.index} must be 4-D, has shape {list(inp.shape)}")
    stride_h, stride_w = c.int_option(op, "stride_h"), c.int_option(op, "stride_w")
    kh, kw = c.int_option(op, "filter_height"), c.int_option(op, "filter_width")
    kind = c.padding(op)
    n, h, w, ch = (int(d) for d in inp.shape)
    oh, ow = c.out_size(kind, h, kh, stride_h), c.out_size(kind, w, kw, stride_w)
    if oh <= 0 or ow <= 0:
        raise c.malformed(op, f"the {kh}x{kw} window does not fit the {h}x{w} input")
    c.check_shape(op, out, (n, oh, ow, ch), "output")
    geometry = {"batches": n, "in_h": h, "in_w": w, "channels": ch, "out_h": oh, "out_w": ow,
                "filter_h": kh, "filter_w": kw, "stride_h": stride_h, "stride_w": stride_w,
                "pad_h": c.leading_padding(op, stride_h, 1, h, kh, oh),
                "pad_w": c.leading_padding(op, stride_w, 1, w, kw, ow)}
    return inp, out, geometry


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts, a 4-D input, options, the output shape."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> PoolData:
    """TFLM's PoolingPrepare."""
    inp, out, g = _parts(graph, op)
    c.same_quantization(op, inp, out)
    out_scale, out_zp = c.per_tensor_int8(op, out, "output")
    act_min, act_max = c.activation_range(op, op.options.get("fused_activation", "NONE"), out_scale, out_zp)
    return PoolData(op_index=op.index, op_type=op.type, average=op.type == "AVERAGE_POOL_2D", **g,
                    act_min=act_min, act_max=act_max)
