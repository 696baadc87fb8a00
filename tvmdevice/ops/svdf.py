"""SVDF, integer: TFLM's Prepare (``svdf_common.cc``, PrepareSvdf).

The input is int8 ([batches, input_size]); the feature weights int8
([filters, input_size]); the time weights and the activation state (a
variable tensor, [batches, memory * filters]) are both int16 or both int8;
the bias is int32 ([units], units = filters / rank); the output int8.  Each
run shifts the state left by one value, writes the feature matmul (rescaled by
``float32(float32(input * feature scale) / state scale)``, clamped to the
state type, plus the state zero point) into each filter's newest slot,
takes each filter's dot product with its time weights, sums ``rank`` filters
per unit onto the bias and rescales by ``float32(float32(state * time scale)
/ output scale)``.  TFLM's integer path applies no fused activation: the
option is read and ignored, as TFLM does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops import _recurrent as r
from tvmdevice.ops._base import INT8, INT32, OpData, Operand, Signature

__all__ = ["SvdfData", "SIGNATURE", "validate", "analyze", "BIAS_SCALE_TOLERANCE"]

SIGNATURE = Signature(
    (Operand("input", INT8), Operand("weights_feature", INT8, constant=True),
     Operand("weights_time", r.INT8_16, constant=True), Operand("bias", INT32, constant=True, optional=True),
     Operand("activation_state", r.INT8_16)),
    (Operand("output", INT8),), ("rank", "fused_activation", "asymmetric_quantize_inputs"))

#: PrepareSvdf: ``|bias scale - state scale * time scale| < 1e-5`` (in double, the product in float32).
BIAS_SCALE_TOLERANCE = 1e-5


@dataclass(frozen=True, eq=False)
class SvdfData(OpData):
    """SVDF op data."""

    state_bits: int  # 16: int16 time weights and state; 8: int8
    batches: int
    n_input: int
    n_filter: int
    n_unit: int
    rank: int
    n_memory: int
    input_zero_point: int
    state_zero_point: int
    output_zero_point: int
    state_min: int
    state_max: int
    scale1_multiplier: int  # feature matmul -> state
    scale1_shift: int
    scale2_multiplier: int  # time dot products + bias -> output
    scale2_shift: int
    has_bias: bool

    @property
    def scratch_bytes(self) -> int:
        """TFLM's two int32 scratch buffers: batches x filters and batches x units."""
        return 4 * self.batches * (self.n_filter + self.n_unit)


def _parts(graph: Graph, op: Operator) -> tuple[Tensor, Tensor, Tensor, Tensor | None, Tensor, Tensor, int]:
    (inp, wf, wt), (bias, st), out = c.operands(graph, op, 3, 2)
    if len(op.inputs) != 5:
        raise c.malformed(op, f"has {len(op.inputs)} inputs; TFLM's SVDF takes 5 (the bias may be -1)")
    rank = c.int_option(op, "rank")
    if len(inp.shape) != 2 or len(wf.shape) != 2 or len(wt.shape) != 2:
        raise c.malformed(op, f"input {list(inp.shape)}, feature weights {list(wf.shape)} and time weights "
                              f"{list(wt.shape)} must all be 2-D")
    batches, n_input = (int(d) for d in inp.shape)
    n_filter, n_memory = int(wf.shape[0]), int(wt.shape[1])
    if n_filter % rank:
        raise c.malformed(op, f"{n_filter} filters are not a multiple of rank {rank}")
    n_unit = n_filter // rank
    c.check_shape(op, wf, (n_filter, n_input), "weights_feature")
    c.check_shape(op, wt, (n_filter, n_memory), "weights_time")
    if bias is not None:
        c.check_shape(op, bias, (n_unit,), "bias")
    state = r.state(op, st, "activation state", (batches, n_memory * n_filter))
    c.check_shape(op, state, (batches, n_memory * n_filter), "activation state")
    c.check_shape(op, out, (batches, n_unit), "output")
    return inp, wf, wt, bias, state, out, rank


def validate(graph: Graph, op: Operator) -> None:
    """Operand counts and the shapes PrepareSvdf checks."""
    _parts(graph, op)


def analyze(graph: Graph, op: Operator) -> SvdfData:
    """TFLM's PrepareSvdf for an int8 input."""
    inp, wf, wt, bias, state, out, rank = _parts(graph, op)
    in_scale, in_zp = r.per_tensor(op, inp, "input", [np.int8])
    wf_scale, _ = r.per_tensor(op, wf, "weights_feature", [np.int8])
    wt_type = np.dtype(wt.dtype)
    wt_scale, _ = r.per_tensor(op, wt, "weights_time", [wt_type])
    if np.dtype(state.dtype) != wt_type:
        raise c.refuse(op, f"activation state tensor {state.index} is {np.dtype(state.dtype).name} but the time "
                           f"weights are {wt_type.name}; TFLM reads the state as the time weights' type")
    st_scale, st_zp = r.per_tensor(op, state, "activation state", [wt_type])
    out_scale, out_zp = r.per_tensor(op, out, "output", [np.int8])
    if bias is None:
        # PrepareSvdf reads the bias scale unconditionally (TODO #1751 in TFLM): no bias crashes it.
        raise c.refuse(op, "the bias is absent; TFLM's integer SVDF prepare needs it")
    if np.dtype(bias.dtype) != np.int32:
        raise c.malformed(op, f"bias tensor {bias.index} is {np.dtype(bias.dtype).name}; int32 is required")
    bias_q = bias.quant
    bias_scale = r.f32(bias_q.scale[0]) if bias_q is not None and bias_q.scale.size else 0.0
    product = r.f32(st_scale * wt_scale)
    if not abs(bias_scale - product) < BIAS_SCALE_TOLERANCE:
        raise c.refuse(op, f"bias scale {bias_scale} differs from state * time weights scale {product} by "
                           f"{BIAS_SCALE_TOLERANCE} or more; TFLM's prepare refuses it")
    m1, s1 = c.multiplier(op, r.f32(r.f32(in_scale * wf_scale) / st_scale))
    m2, s2 = c.multiplier(op, r.f32(product / out_scale))
    bits = 8 * wt_type.itemsize
    info = np.iinfo(wt_type)
    n_filter, n_memory = int(wf.shape[0]), int(wt.shape[1])
    return SvdfData(
        op_index=op.index, op_type=op.type, state_bits=bits, batches=int(inp.shape[0]), n_input=int(inp.shape[1]),
        n_filter=n_filter, n_unit=n_filter // rank, rank=rank, n_memory=n_memory, input_zero_point=in_zp,
        state_zero_point=st_zp, output_zero_point=out_zp, state_min=int(info.min), state_max=int(info.max),
        scale1_multiplier=m1, scale1_shift=s1, scale2_multiplier=m2, scale2_shift=s2, has_bias=True)
