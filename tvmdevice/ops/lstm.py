"""UNIDIRECTIONAL_SEQUENCE_LSTM, integer: TFLM's Prepare (``unidirectional_sequence_lstm.cc``,
``lstm_eval_common.cc``).

TFLM runs the standard (Keras) LSTM only: all four gates, no CIFG, no
peephole, no projection, no layer norm.  Activations (input, hidden state,
output) are int8 with int32 biases, or int16 with int64 biases; weights are
int8, per tensor; the cell state is int16.  Each gate is
``activation(FC(input) + FC(hidden))`` with both fully connected outputs in
Q3.12 (scale 2**-12, int16, saturating), sigmoid for the input, forget and
output gates and tanh for the cell gate; the gate outputs are Q0.15.  Then::

    cell   = forget * cell + input * cell_gate        (int16, clipped if cell_clip > 0)
    hidden = tanh(cell) * output                      (the activation type, hidden zero point)

and the hidden state is copied to the output at each time step.  The FC
multipliers are ``float32(input scale * weight scale) / 2**-12`` (TFLM's
GetQuantizedConvolutionMultipler); the element-wise multiplications use
``2**-15 * 2**-15 / scale`` in double (CreateInterGateMulParams).

Inputs (TFLite order): 0 input, 1-4 input-to-{input, forget, cell, output}
weights, 5-8 recurrent-to-{...} weights, 9-11 peephole weights (absent),
12-15 {input, forget, cell, output} gate biases, 16-17 projection (absent),
18 output (hidden) state and 19 cell state (variable tensors), 20-23 layer
norm coefficients (absent).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tvmdevice import quantization
from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import _checks as c
from tvmdevice.ops import _recurrent as r
from tvmdevice.ops._base import INT8, OpData, Operand, Signature

__all__ = ["LstmData", "SIGNATURE", "validate", "analyze", "GATES", "INPUT_WEIGHTS", "RECURRENT_WEIGHTS", "BIASES",
           "OUTPUT_STATE", "CELL_STATE"]

#: The gates in TFLite's operand order.
GATES = ("input", "forget", "cell", "output")
#: Operand index of each gate's input weights, recurrent weights and bias.
INPUT_WEIGHTS = (1, 2, 3, 4)
RECURRENT_WEIGHTS = (5, 6, 7, 8)
BIASES = (12, 13, 14, 15)
OUTPUT_STATE, CELL_STATE = 18, 19
_ABSENT_VARIANTS = {9: "peephole", 10: "peephole", 11: "peephole", 16: "projection", 17: "projection",
                    20: "layer norm", 21: "layer norm", 22: "layer norm", 23: "layer norm"}

_BIAS_TYPES = frozenset({np.dtype("<i4"), np.dtype("<i8")})
SIGNATURE = Signature(
    # The input gate's operands are optional in TFLite (CIFG); TFLM refuses a CIFG LSTM at prepare.
    (Operand("input", r.INT8_16),
     *(Operand(f"input_to_{g}_weights", INT8, constant=True, optional=g == "input") for g in GATES),
     *(Operand(f"recurrent_to_{g}_weights", INT8, constant=True, optional=g == "input") for g in GATES),
     *(Operand(f"cell_to_{g}_weights", r.INT8_16, constant=True, optional=True) for g in ("input", "forget", "output")),
     *(Operand(f"{g}_gate_bias", _BIAS_TYPES, constant=True, optional=g == "input") for g in GATES),
     Operand("projection_weights", INT8, constant=True, optional=True),
     Operand("projection_bias", _BIAS_TYPES, constant=True, optional=True),
     Operand("output_state", r.INT8_16), Operand("cell_state", frozenset({np.dtype("<i2")})),
     *(Operand(f"{g}_layer_norm_coefficients", r.INT8_16, constant=True, optional=True) for g in GATES)),
    (Operand("output", r.INT8_16),),
    ("fused_activation", "cell_clip", "proj_clip", "time_major", "asymmetric_quantize_inputs",
     "diagonal_recurrent_tensors"))

#: Scale of the gates' fully connected outputs (Q3.12) and of their activations (Q0.15).
GATE_INPUT_SCALE = 2.0**-12
GATE_OUTPUT_SCALE = 2.0**-15


@dataclass(frozen=True, eq=False)
class LstmData(OpData):
    """UNIDIRECTIONAL_SEQUENCE_LSTM op data; per-gate arrays are in :data:`GATES` order."""

    activation_bits: int  # 8: int8 activations, int32 biases; 16: int16 activations, int64 biases
    time_major: bool
    batches: int
    time_steps: int
    n_input: int
    n_state: int
    input_offset: int  # -input zero point
    hidden_offset: int  # -hidden state zero point (the recurrent FC's input offset)
    hidden_zero_point: int
    hidden_min: int
    hidden_max: int
    gate_input_multiplier: np.ndarray  # int32 [4]: input -> Q3.12
    gate_input_shift: np.ndarray
    gate_recurrent_multiplier: np.ndarray  # int32 [4]: hidden state -> Q3.12
    gate_recurrent_shift: np.ndarray
    forget_multiplier: int  # forget gate x cell state -> cell state
    forget_shift: int
    input_multiplier: int  # input gate x cell gate -> cell state
    input_shift: int
    output_multiplier: int  # tanh(cell) x output gate -> hidden state
    output_shift: int
    cell_clip: int  # quantized clip (int16)
    cell_clip_enabled: bool
    cell_tanh_multiplier: int  # tanh of the cell state: (x * multiplier + round) >> shift into Q3.12-ish
    cell_tanh_shift: int

    @property
    def scratch_elements(self) -> int:
        """int16 values of TFLM's four scratch buffers (batch x state each)."""
        return 4 * self.batches * self.n_state

    @property
    def macs(self) -> int:
        return 4 * self.batches * self.time_steps * self.n_state * (self.n_input + self.n_state)


def _parts(graph: Graph, op: Operator) -> tuple[list[Tensor | None], Tensor, tuple[int, int, int, int]]:
    (inp,), rest, out = c.operands(graph, op, 1, 23)
    if len(op.inputs) != 24:
        raise c.malformed(op, f"has {len(op.inputs)} inputs; TFLM's LSTM takes exactly 24 (absent ones as -1)")
    ins: list[Tensor | None] = [inp, *rest]
    if len(inp.shape) != 3:
        raise c.malformed(op, f"input tensor {inp.index} has shape {list(inp.shape)}; an LSTM input is 3-D")
    time_major = bool(op.options.get("time_major", False))
    d0, d1, n_input = (int(d) for d in inp.shape)
    time_steps, batches = (d0, d1) if time_major else (d1, d0)
    hidden = ins[OUTPUT_STATE]
    if hidden is None or len(hidden.shape) < 1:
        raise c.malformed(op, "its output state (a variable tensor) is absent")
    n_state = int(hidden.shape[-1])
    for k in (*INPUT_WEIGHTS, *RECURRENT_WEIGHTS, *BIASES):
        if ins[k] is None:
            raise c.refuse(op, f"input {k} ({SIGNATURE.inputs[k].name}) is absent; TFLM's LSTM needs all "
                               "four gates (no CIFG)")
    for k in INPUT_WEIGHTS:
        c.check_shape(op, ins[k], (n_state, n_input), SIGNATURE.inputs[k].name)  # type: ignore[arg-type]
    for k in RECURRENT_WEIGHTS:
        c.check_shape(op, ins[k], (n_state, n_state), SIGNATURE.inputs[k].name)  # type: ignore[arg-type]
    for k in BIASES:
        c.check_shape(op, ins[k], (n_state,), SIGNATURE.inputs[k].name)  # type: ignore[arg-type]
    for name, k in (("output state", OUTPUT_STATE), ("cell state", CELL_STATE)):
        r.state(op, ins[k], name, (batches, n_state))
    c.check_shape(op, out, (d0, d1, n_state), "output")
    return ins, out, (batches, time_steps, n_input, n_state)


def validate(graph: Graph, op: Operator) -> None:
    """Operand count, the 3-D input, weight, bias, state and output shapes."""
    _parts(graph, op)


def _cell_scale_power(scale: float) -> int:
    """TFLM's CheckedLog2 in float32: ``round(logf(scale) * (1 / logf(2)))`` (TFLM ignores whether it is exact)."""
    x_log2 = np.float32(np.log(np.float32(scale))) * (np.float32(1.0) / np.float32(np.log(np.float32(2.0))))
    return quantization.round_half_away(float(np.float32(x_log2)))


def _inter_gate(op: Operator, scale1: float, scale2: float, out_scale: float) -> tuple[int, int]:
    # CreateInterGateMulParams: the float scales widened, multiplied and divided in double.
    return c.multiplier(op, scale1 * scale2 / out_scale)


def analyze(graph: Graph, op: Operator) -> LstmData:
    """TFLM's Prepare for the integer UNIDIRECTIONAL_SEQUENCE_LSTM."""
    ins, out, (batches, time_steps, n_input, n_state) = _parts(graph, op)
    for k, variant in _ABSENT_VARIANTS.items():
        if ins[k] is not None:
            raise c.refuse(op, f"input {k} ({SIGNATURE.inputs[k].name}) is given: TFLM's LSTM runs the standard "
                               f"LSTM only, without {variant}")
    activation = op.options.get("fused_activation", "TANH")
    if activation != "TANH":
        raise c.refuse(op, f"cell gate activation {activation!r}: TFLM's integer LSTM runs TANH there")
    inp, hidden, cell = ins[0], ins[OUTPUT_STATE], ins[CELL_STATE]
    assert inp is not None and hidden is not None and cell is not None
    dtype = np.dtype(inp.dtype)
    bits = 8 if dtype == np.int8 else 16
    for t, role in ((hidden, "output state"), (out, "output")):
        if np.dtype(t.dtype) != dtype:
            raise c.refuse(op, f"{role} tensor {t.index} is {np.dtype(t.dtype).name}; it must be {dtype.name} "
                               "like the input")
    bias_type = np.dtype("<i4") if bits == 8 else np.dtype("<i8")
    for k in BIASES:
        b = ins[k]
        assert b is not None
        if np.dtype(b.dtype) != bias_type:
            raise c.refuse(op, f"{SIGNATURE.inputs[k].name} tensor {b.index} is {np.dtype(b.dtype).name}; "
                               f"{bits}-bit activations take {bias_type.name} biases")
    in_scale, in_zp = r.per_tensor(op, inp, "input", [dtype])
    h_scale, h_zp = r.per_tensor(op, hidden, "output state", [dtype])
    if bits == 16 and (in_zp or h_zp):
        raise c.refuse(op, "int16 activations must be symmetric (zero point 0), as TFLite quantizes them")
    if np.dtype(cell.dtype) != np.int16:
        raise c.refuse(op, f"cell state tensor {cell.index} is {np.dtype(cell.dtype).name}; TFLM's integer LSTM "
                           "keeps an int16 cell state")
    cell_scale, _ = r.per_tensor(op, cell, "cell state", [np.int16])
    real_in, real_rec = [], []
    for k_in, k_rec in zip(INPUT_WEIGHTS, RECURRENT_WEIGHTS):
        scales = []
        for k, x_scale in ((k_in, in_scale), (k_rec, h_scale)):
            w = ins[k]
            assert w is not None
            w_scale, w_zp = r.per_tensor(op, w, SIGNATURE.inputs[k].name, [np.int8])
            if w_zp != 0:
                raise c.refuse(op, f"{SIGNATURE.inputs[k].name} tensor {w.index} has zero point {w_zp}; TFLM's "
                                   "LSTM weights are symmetric")
            # GetQuantizedConvolutionMultipler: the scale product in double, as tflite-micro
            # rounds (see ops/fully_connected.py), over the Q3.12 scale.
            scales.append(x_scale * w_scale / GATE_INPUT_SCALE)
        real_in.append(scales[0])
        real_rec.append(scales[1])
    in_mult, in_shift = c.multipliers(op, real_in)
    rec_mult, rec_shift = c.multipliers(op, real_rec)
    if bits == 16:
        r.int64_requant_shift(op, in_shift, "an input fully connected rescale")
        r.int64_requant_shift(op, rec_shift, "a recurrent fully connected rescale")
    forget_m, forget_s = _inter_gate(op, GATE_OUTPUT_SCALE, cell_scale, cell_scale)
    input_m, input_s = _inter_gate(op, GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, cell_scale)
    output_m, output_s = _inter_gate(op, GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, h_scale)
    clip = float(op.options.get("cell_clip", 0.0))
    if not (math.isfinite(clip) and clip >= 0):
        raise c.refuse(op, f"cell_clip {clip} must be a finite value >= 0 (TFLM's prepare refuses it)")
    # CreateLstmCellStateInfo: clip / scale in double, clamped to int16, truncated.
    quantized_clip = int(min(max(clip / cell_scale, float(r.INT16_MIN)), float(r.INT16_MAX)))
    # lstm_internal::Tanh: the cell state (scale 2**power) rescaled to Q3.12 times 3/4's inverse.
    left_shift = (15 + _cell_scale_power(cell_scale)) - 3
    if left_shift >= 0:
        tanh_mult, tanh_shift = 3 << left_shift, 0
    else:
        tanh_mult, tanh_shift = 3, -left_shift
    if tanh_mult * 32768 > c.INT32_MAX or tanh_shift > 30:
        raise c.refuse(op, f"cell state scale {cell_scale} is too far from 2**-12 for TFLM's int16 tanh "
                           "(its int32 rescale would overflow)")
    hidden_min, hidden_max = (-128, 127) if bits == 8 else (r.INT16_MIN, r.INT16_MAX)
    return LstmData(
        op_index=op.index, op_type=op.type, activation_bits=bits, time_major=bool(op.options.get("time_major")),
        batches=batches, time_steps=time_steps, n_input=n_input, n_state=n_state, input_offset=-in_zp,
        hidden_offset=-h_zp, hidden_zero_point=h_zp, hidden_min=hidden_min, hidden_max=hidden_max,
        gate_input_multiplier=in_mult, gate_input_shift=in_shift, gate_recurrent_multiplier=rec_mult,
        gate_recurrent_shift=rec_shift, forget_multiplier=forget_m, forget_shift=forget_s,
        input_multiplier=input_m, input_shift=input_s, output_multiplier=output_m, output_shift=output_s,
        cell_clip=quantized_clip, cell_clip_enabled=clip > 0, cell_tanh_multiplier=tanh_mult,
        cell_tanh_shift=tanh_shift)
