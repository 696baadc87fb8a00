"""The params structs of the host's recurrent kernels (``lstm.c``, ``svdf.c``), declared once.

Filled by member name from :class:`tvmdevice.ops.LstmData` and
:class:`tvmdevice.ops.SvdfData` (:mod:`tvmdevice.host.calls`).  Light on
purpose, like :mod:`tvmdevice.host.kernel_table`: the build imports it
without the rest of the package.
"""

from __future__ import annotations

from ..layout import Field, Layout

__all__ = ["LSTM_PARAMS", "SVDF_PARAMS", "LSTM_GATES"]

#: Per-gate arrays hold the input, forget, cell and output gates, in TFLite's operand order.
LSTM_GATES = 4


def _int32(*names: str) -> tuple[Field, ...]:
    return tuple(Field(name, "int32_t") for name in names)


LSTM_PARAMS = Layout("tvmd_c_lstm_params_t", (
    Field("time_major", "int32_t", doc="1: input [time, batch, features], all batches per step; 0: batch major"),
    *_int32("batches", "time_steps", "n_input", "n_state"),
    Field("input_offset", "int32_t", doc="-input zero point"),
    Field("hidden_offset", "int32_t", doc="-hidden state zero point (the recurrent products' input offset)"),
    Field("hidden_zero_point", "int32_t"),
    Field("hidden_min", "int32_t", doc="the activation type's range"), Field("hidden_max", "int32_t"),
    Field("gate_input_multiplier", "int32_t", (LSTM_GATES,), doc="input x weights -> Q3.12, per gate"),
    Field("gate_input_shift", "int32_t", (LSTM_GATES,)),
    Field("gate_recurrent_multiplier", "int32_t", (LSTM_GATES,), doc="hidden x weights -> Q3.12, per gate"),
    Field("gate_recurrent_shift", "int32_t", (LSTM_GATES,)),
    Field("forget_multiplier", "int32_t", doc="forget gate x cell state -> cell state"),
    Field("forget_shift", "int32_t"),
    Field("input_multiplier", "int32_t", doc="input gate x cell gate -> cell state"),
    Field("input_shift", "int32_t"),
    Field("output_multiplier", "int32_t", doc="tanh(cell) x output gate -> hidden state"),
    Field("output_shift", "int32_t"),
    Field("cell_clip", "int32_t", doc="quantized cell clip"),
    Field("cell_clip_enabled", "int32_t", doc="1 when the model's cell_clip > 0"),
    Field("cell_tanh_multiplier", "int32_t", doc="tanh of the cell state: (x * multiplier + round) >> shift"),
    Field("cell_tanh_shift", "int32_t"),
), doc="UNIDIRECTIONAL_SEQUENCE_LSTM, int8 or int16 activations, int16 cell state (TFLM's EvalLstm).")

SVDF_PARAMS = Layout("tvmd_c_svdf_params_t", (
    *_int32("batches", "n_input", "n_filter", "n_unit", "rank", "n_memory"),
    *_int32("input_zero_point", "state_zero_point", "output_zero_point"),
    Field("state_min", "int32_t", doc="the state type's range"), Field("state_max", "int32_t"),
    Field("scale1_multiplier", "int32_t", doc="feature matmul -> state"), Field("scale1_shift", "int32_t"),
    Field("scale2_multiplier", "int32_t", doc="time products + bias -> output"), Field("scale2_shift", "int32_t"),
    Field("has_bias", "int32_t"),
), doc="SVDF, int8 input and output, int16 or int8 state and time weights (TFLM's EvalIntegerSvdfReference).")
