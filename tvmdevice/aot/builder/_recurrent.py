"""Builder methods for the recurrent operators, laid out as the TFLite converter writes them
(mixed into :class:`tvmdevice.aot.builder.ModelBuilder`).

* ``UNIDIRECTIONAL_SEQUENCE_LSTM``: 24 inputs in TFLite's order (input; input
  and recurrent weights for the input, forget, cell and output gates; absent
  peephole weights; the four gate biases; absent projection; the output
  state and the cell state as *variable* tensors; absent layer norm
  coefficients).  As the converter's integer quantization does: weights int8
  symmetric per tensor; int8 activations with int32 biases ("8x8 -> 16") or
  int16 symmetric activations with int64 biases ("16x8 -> 16"); an int16 cell
  state with a power-of-two scale; the output state quantized like the
  output.  The converter also attaches five "intermediate" tensors to an
  integer LSTM; TFLM's current kernel ignores them and they are not written.
* ``SVDF``: input, feature weights (int8), time weights, bias (int32, scale
  state * time weights scale), activation state (variable,
  ``[batches, memory * filters]``); the converter's int8 quantization makes
  the time weights and the state int16 (``state="int16"``); ``state="int8"``
  gives the int8-state variant TFLM also runs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tvmdevice.aot.builder._common import OPS, TT, TensorRef

__all__ = ["RecurrentMixin"]

_TANH = 4  # tflite.ActivationFunctionType.TANH
_ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3, "TANH": 4}
# Spread (std) of a uniform integer in [-127, 127].
_STD = 73.0


class RecurrentMixin:
    """UNIDIRECTIONAL_SEQUENCE_LSTM and SVDF.  Relies on the builder's ``_tensor``, ``_op``, ``_spec`` and ``_rng``."""

    _tensor: Any
    _op: Any
    _spec: Any
    _rng: np.random.Generator

    def _variable(self, shape: tuple[int, ...], ttype: int, scale: float, zero_point: int) -> TensorRef:
        t = self._tensor(shape, ttype, scale, zero_point)
        self._spec.tensors[t.index].is_variable = True
        return t

    def _symmetric(self, shape: tuple[int, ...], scale: float, ttype: int = TT.INT8) -> TensorRef:
        hi = 127 if ttype == TT.INT8 else 32767
        values = self._rng.integers(-hi, hi + 1, size=shape, dtype=np.int64)
        return self._tensor(shape, ttype, scale, 0, data=values)

    def lstm(self, x: TensorRef, units: int, *, time_major: bool = False, cell_clip: float = 0.0,
             cell_scale_power: int = -11, out_scale: float | None = None, out_zero_point: int = 0,
             gate_spread: float = 2.0) -> TensorRef:
        """UNIDIRECTIONAL_SEQUENCE_LSTM over ``x`` (``[batch, time, features]``, or ``[time, batch,
        features]`` with ``time_major``), int8 or int16 like ``x``; returns the output sequence.

        :param units: the state size.
        :param cell_scale_power: the cell state's scale is ``2**cell_scale_power``.
        :param out_scale: the hidden state's and output's scale (default 1/128, or 1/32768 for int16).
        :param gate_spread: std of each gate's pre-activation (real units), which sets the weight scales.
        """
        int16 = np.dtype(x.dtype) == np.int16
        act_type, bias_type = (TT.INT16, TT.INT64) if int16 else (TT.INT8, TT.INT32)
        if x.scale is None:
            raise ValueError("the LSTM input must be quantized int8 or int16")
        d0, d1, n_input = x.shape
        batches = d1 if time_major else d0
        h_scale = out_scale if out_scale is not None else (1.0 / 32768 if int16 else 1.0 / 128)
        h_zp = 0 if int16 else out_zero_point
        x_std = x.scale * (_STD * 128 if int16 else _STD)  # a uniform int over the whole range, in real units
        h_std = 0.5  # hidden values lie in (-1, 1)
        w_in = gate_spread / (x_std * math.sqrt(n_input) * _STD)
        w_rec = gate_spread / (h_std * math.sqrt(units) * _STD)
        inputs = [x.index]
        inputs += [self._symmetric((units, n_input), w_in * self._rng.uniform(0.7, 1.3)).index for _ in range(4)]
        inputs += [self._symmetric((units, units), w_rec * self._rng.uniform(0.7, 1.3)).index for _ in range(4)]
        inputs += [-1, -1, -1]
        for k in range(4):
            scale = float(np.float32(x.scale) * np.float32(self._spec.tensors[inputs[1 + k]].scales[0]))
            spread = int(min(0.5 / scale, 2**30))  # biases of about half a unit
            values = self._rng.integers(-spread, spread + 1, size=units, dtype=np.int64)
            inputs.append(self._tensor((units,), bias_type, scale, 0, data=values).index)
        inputs += [-1, -1]
        inputs.append(self._variable((batches, units), act_type, h_scale, h_zp).index)
        inputs.append(self._variable((batches, units), TT.INT16, 2.0**cell_scale_power, 0).index)
        inputs += [-1, -1, -1, -1]
        y = self._tensor((d0, d1, units), act_type, h_scale, h_zp)
        self._op(OPS.UNIDIRECTIONAL_SEQUENCE_LSTM, inputs, [y.index], ("UnidirectionalSequenceLSTMOptions", {
            "FusedActivationFunction": _TANH, "CellClip": float(cell_clip), "ProjClip": 0.0,
            "TimeMajor": bool(time_major), "AsymmetricQuantizeInputs": False}))
        return y

    def svdf(self, x: TensorRef, units: int, *, rank: int = 1, memory: int = 4, state: str = "int16",
             activation: str = "NONE", out_scale: float | None = None, out_zero_point: int = 0,
             state_zero_point: int = 0) -> TensorRef:
        """SVDF over ``x`` (int8 ``[batch, features]``): ``units * rank`` filters of ``memory`` steps.

        :param state: ``"int16"`` (the converter's choice: int16 time weights and state) or ``"int8"``.
        :param state_zero_point: the int8 state's zero point (int16 state is symmetric).
        """
        if state not in ("int16", "int8"):
            raise ValueError(f"state must be 'int16' or 'int8', not {state!r}")
        if x.scale is None or np.dtype(x.dtype) != np.int8:
            raise ValueError("the SVDF input must be quantized int8")
        batches, n_input = x.shape
        n_filter = units * rank
        st_type = TT.INT16 if state == "int16" else TT.INT8
        st_max = 32767 if state == "int16" else 127
        wf_scale = 1.0 / 127
        feature_std = x.scale * _STD * wf_scale * _STD * math.sqrt(n_input)
        st_scale = 3.0 * feature_std / st_max
        wt_scale = 1.0 / st_max
        wf = self._symmetric((n_filter, n_input), wf_scale)
        wt = self._symmetric((n_filter, memory), wt_scale, st_type)
        b_scale = float(np.float32(st_scale) * np.float32(wt_scale))
        out_std = st_scale * st_max / 3 * wt_scale * st_max / 1.7 * math.sqrt(memory * rank)
        spread = int(min(out_std / b_scale, 2**30))
        bias = self._tensor((units,), TT.INT32, b_scale, 0,
                            data=self._rng.integers(-spread, spread + 1, size=units, dtype=np.int64))
        st = self._variable((batches, memory * n_filter), st_type, st_scale,
                            0 if state == "int16" else state_zero_point)
        y = self._tensor((batches, units), TT.INT8, out_scale if out_scale is not None else 3.0 * out_std / 128,
                         out_zero_point)
        self._op(OPS.SVDF, [x.index, wf.index, wt.index, bias.index, st.index], [y.index], ("SVDFOptions", {
            "Rank": rank, "FusedActivationFunction": _ACTIVATIONS[activation], "AsymmetricQuantizeInputs": False}))
        return y
