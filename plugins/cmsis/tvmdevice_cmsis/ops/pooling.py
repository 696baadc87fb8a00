"""AVERAGE_POOL_2D and MAX_POOL_2D: validation and parameters (TFLM's Prepare).

No rescaling happens in TFLM's int8 pooling, so input and output must share
scale and zero point; only the fused activation clamp applies.
"""

from __future__ import annotations

from tvmdevice.aot.ir import Graph, Operator

from . import _common as c

__all__ = ["analyze_pool"]


def analyze_pool(graph: Graph, op: Operator) -> c.KernelSpec:
    """Validate an AVERAGE_POOL_2D or MAX_POOL_2D operator and compute its kernel spec."""
    ins, out = c.io(graph, op, 1, 1)
    inp = ins[0]
    if len(inp.shape) != 4:
        raise c.invalid(op, f"input tensor {inp.index} must be 4-D, has shape {list(inp.shape)}")
    o = op.options
    stride_h, stride_w, kh, kw = c.positive(op, o, "stride_h", "stride_w", "filter_height", "filter_width")
    padding = c.padding_kind(op)
    n, h, w, ch = (int(d) for d in inp.shape)
    oh, ow = c.out_size(padding, h, kh, stride_h), c.out_size(padding, w, kw, stride_w)
    if oh <= 0 or ow <= 0:
        raise c.invalid(op, f"the {kh}x{kw} window does not fit the {h}x{w} input")
    c.check_extent(op, h, oh, stride_h, kh)
    c.check_extent(op, w, ow, stride_w, kw)
    c.check_output_shape(op, out, (n, oh, ow, ch))
    in_scale, in_zp = c.int8_quant(op, inp, "input")
    out_scale, out_zp = c.int8_quant(op, out, "output")
    if in_scale != out_scale or in_zp != out_zp:
        raise c.unsupported(op, f"input ({in_scale}, {in_zp}) and output ({out_scale}, {out_zp}) quantization "
                                f"differ; int8 pooling does not rescale")
    pad_h = c.leading_padding(stride_h, 1, h, kh, oh)
    pad_w = c.leading_padding(stride_w, 1, w, kw, ow)
    # With TFLM's padding every window overlaps the image, so the empty
    # window TFLM's AveragePool fails on cannot occur (the C kernel still
    # returns an error if it did).
    average = op.type == "AVERAGE_POOL_2D"
    act_min, act_max = c.activation_range(op, o.get("fused_activation", "NONE"), out_scale, out_zp)
    fields = {"batches": n, "in_h": h, "in_w": w, "channels": ch, "out_h": oh, "out_w": ow,
              "filter_h": kh, "filter_w": kw, "stride_h": stride_h, "stride_w": stride_w,
              "pad_h": pad_h, "pad_w": pad_w, "act_min": act_min, "act_max": act_max}
    kind = "avg_pool" if average else "max_pool"
    return c.KernelSpec(kind=kind, name=f"tvmd_cmsis_{kind}_s8", fields=fields,
                        buffers=(c.buffer("input", inp), c.buffer("output", out, output=True)))
