"""UNIDIRECTIONAL_SEQUENCE_LSTM and SVDF, integer, in numpy: the oracle of the recurrent kernels.

Bit-exact with TFLM's ``lstm_eval.h`` (EvalLstm with int8 or int16
activations) and ``svdf_common.cc`` (EvalIntegerSvdfReference), run on
:class:`tvmdevice.ops.LstmData` / :class:`tvmdevice.ops.SvdfData`.  The state
operands (variable tensors) are updated in place, like TFLM's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvmdevice.kernel import PreparedCall
from tvmdevice.ops import LstmData, SvdfData
from tvmdevice.ops.lstm import BIASES, CELL_STATE, INPUT_WEIGHTS, OUTPUT_STATE, RECURRENT_WEIGHTS
from tvmdevice.testing.reference import _common as c
from tvmdevice.testing.reference._common import SIGMOID_TABLE

__all__ = ["build", "run_lstm", "run_svdf", "SIGMOID_TABLE", "sigmoid_q15", "tanh_q15"]

_INT16 = (-(2**15), 2**15 - 1)


def build(data: LstmData | SvdfData) -> PreparedCall:
    """The host call for LSTM or SVDF op data."""
    if isinstance(data, LstmData):
        return PreparedCall(name=f"lstm_s{data.activation_bits}", kernel=run_lstm, params=data)
    return PreparedCall(name=f"svdf_s8_s{data.state_bits}", kernel=run_svdf, params=data)


def _wrap16(x: np.ndarray) -> np.ndarray:
    return ((np.asarray(x, np.int64) + 2**15) & 0xFFFF) - 2**15


def _lookup(a: np.ndarray, frac_bits: int, saturated: int) -> np.ndarray:
    """The table interpolated at ``a / 2**frac_bits`` (a >= 0), in units of 2**-(16 + frac_bits)."""
    uh = a >> frac_bits
    idx = np.minimum(uh, 254)
    ua, ub = SIGMOID_TABLE[idx], SIGMOID_TABLE[idx + 1]
    return np.where(uh >= 255, saturated, (ua << frac_bits) + (a & ((1 << frac_bits) - 1)) * (ub - ua))


def sigmoid_q15(x: np.ndarray) -> np.ndarray:
    """reference_integer_ops::Logistic on int16 Q3.12 (multiplier 3, no shift): Q0.15 out."""
    v = np.asarray(x, np.int64) * 3
    res = _lookup(np.abs(v), 9, 0x7FFF << 10)
    res = np.where(v >= 0, res + (1 << 9), (1 << 25) - res + (1 << 9) - 1)
    return _wrap16(res >> 10)


def tanh_q15(x: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """reference_integer_ops::Tanh on int16 (``(x * multiplier + round) >> shift`` first): Q0.15 out."""
    rounding = 1 << (shift - 1) if shift > 0 else 0
    v = (np.asarray(x, np.int64) * multiplier + rounding) >> shift
    res = _lookup(np.abs(v), 8, 0xFFFF << 8)
    res = np.where(v >= 0, res - (1 << 23) + (1 << 7), -res + (1 << 23) + (1 << 7) - 1)
    return _wrap16(res >> 8)


def _fc(p: LstmData, x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, offset: int, mult: int,
        shift: int) -> np.ndarray:
    """One gate's fully connected part, into Q3.12 int16 (saturating)."""
    acc = (x.astype(np.int64) + offset) @ w.astype(np.int64).T
    if bias is not None:
        acc = acc + bias.astype(np.int64)
    if p.activation_bits == 8:
        y = c.requantize(acc, mult, shift)
    else:
        y = c.requantize64(acc, mult, shift)
    return np.clip(y, *_INT16)


def _mul(a: np.ndarray, b: np.ndarray, mult: int, shift: int, offset: int, lo: int, hi: int) -> np.ndarray:
    return np.clip(c.requantize(a * b, mult, shift) + offset, lo, hi)


def _step(p: LstmData, x: np.ndarray, h: np.ndarray, cell: np.ndarray, weights: list[Any]) -> np.ndarray:
    """One time step on rows ``x`` [rows, input], updating ``h`` and ``cell`` [rows, state] in place."""
    gates = []
    for k in range(4):
        w_in, w_rec, bias = weights[k]
        pre = _fc(p, x, w_in, bias, p.input_offset, int(p.gate_input_multiplier[k]), int(p.gate_input_shift[k]))
        rec = _fc(p, h, w_rec, None, p.hidden_offset, int(p.gate_recurrent_multiplier[k]),
                  int(p.gate_recurrent_shift[k]))
        total = np.clip(pre + rec, *_INT16)
        gates.append(tanh_q15(total, 3, 0) if k == 2 else sigmoid_q15(total))
    i_gate, f_gate, g_gate, o_gate = gates
    kept = _mul(f_gate, cell.astype(np.int64), p.forget_multiplier, p.forget_shift, 0, *_INT16)
    added = _mul(i_gate, g_gate, p.input_multiplier, p.input_shift, 0, *_INT16)
    new_cell = np.clip(kept + added, *_INT16)
    if p.cell_clip_enabled:
        new_cell = np.maximum(np.minimum(p.cell_clip, new_cell), -p.cell_clip)
    cell[...] = new_cell
    hidden = _mul(tanh_q15(new_cell, p.cell_tanh_multiplier, p.cell_tanh_shift), o_gate, p.output_multiplier,
                  p.output_shift, p.hidden_zero_point, p.hidden_min, p.hidden_max)
    h[...] = hidden
    return hidden


def run_lstm(params: LstmData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = the 24 inputs (None where absent), the output; the states are updated in place."""
    p = params
    x = buffers[0]
    weights = [(buffers[INPUT_WEIGHTS[k]], buffers[RECURRENT_WEIGHTS[k]], buffers[BIASES[k]]) for k in range(4)]
    h_buf, c_buf, out = buffers[OUTPUT_STATE], buffers[CELL_STATE], buffers[24]
    h = h_buf.reshape(p.batches, p.n_state).astype(np.int64)
    cell = c_buf.reshape(p.batches, p.n_state).astype(np.int64)
    y = np.zeros(out.shape, np.int64)
    if p.time_major:
        for t in range(p.time_steps):
            y[t] = _step(p, x[t].astype(np.int64), h, cell, weights)
    else:
        for b in range(p.batches):
            for t in range(p.time_steps):
                y[b, t] = _step(p, x[b, t][None, :].astype(np.int64), h[b:b + 1], cell[b:b + 1], weights)[0]
    h_buf[...] = h.reshape(h_buf.shape).astype(h_buf.dtype)
    c_buf[...] = cell.reshape(c_buf.shape).astype(c_buf.dtype)
    out[...] = y.astype(out.dtype)


def run_svdf(params: SvdfData, buffers: list[Any], device: Any = None) -> None:
    """Kernel: buffers = [input, weights_feature, weights_time, bias, activation_state, output]."""
    p = params
    x, wf, wt, bias, st_buf, out = buffers[:6]
    bits = p.state_bits
    state = st_buf.reshape(-1).astype(np.int64)
    state[:-1] = state[1:].copy()  # TFLM shifts the whole buffer left by one value
    state = state.reshape(p.batches, p.n_filter, p.n_memory)
    feature = (x.astype(np.int64) - p.input_zero_point) @ wf.astype(np.int64).T  # [batches, filters]
    newest = np.clip(c.requantize(feature, p.scale1_multiplier, p.scale1_shift), p.state_min, p.state_max)
    newest = newest + p.state_zero_point
    state[:, :, -1] = _wrap16(newest) if bits == 16 else ((newest + 128) & 0xFF) - 128
    products = c.wrap_i32(np.einsum("bfm,fm->bf", state - p.state_zero_point, wt.astype(np.int64)))
    sums = products.reshape(p.batches, p.n_unit, p.rank).sum(axis=2)
    acc = c.wrap_i32(sums + (bias.astype(np.int64) if bias is not None else 0))
    y = c.requantize(acc, p.scale2_multiplier, p.scale2_shift) + p.output_zero_point
    out[...] = np.clip(y, -128, 127).astype(np.int8).reshape(out.shape)
    st_buf[...] = state.reshape(st_buf.shape).astype(st_buf.dtype)
