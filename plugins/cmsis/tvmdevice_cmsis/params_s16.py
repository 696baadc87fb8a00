"""Params structs of cmsis-nn's int16x8 kernels, TRANSPOSE, SVDF and LSTM.

CMSIS-NN's s16 kernels (``arm_convolve_s16``, ``arm_depthwise_conv_s16``,
``arm_fully_connected_s16``, ``arm_softmax_s16``...) take their int16
activations and int8 weights as the model has them: nothing is packed, so
these structs are the op data's members (:mod:`tvmdevice.ops.int16`) with the
``kind`` tag first.  The int8 kernels' structs that fit unchanged (pooling,
ADD/MUL, SOFTMAX int8 -> int16) are reused by :mod:`tvmdevice_cmsis.kernel_table`.

Light on purpose (the core's layout module only), like the kernel table that
imports it.
"""

from __future__ import annotations

from tvmdevice.layout import Field, Layout

__all__ = ["CONV_S16_PARAMS", "FULLY_CONNECTED_S16_PARAMS", "SOFTMAX_S16_PARAMS", "TRANSPOSE_PARAMS",
           "TRANSPOSE_DIMS", "SVDF_PARAMS", "LSTM_PARAMS", "LSTM_GATES"]

#: Per-gate arrays hold the input, forget, cell and output gates, in TFLite's operand order.
LSTM_GATES = 4

#: Rank of CMSIS-NN's arm_transpose_s8 (``cmsis_nn_dims``: N, H, W, C).
TRANSPOSE_DIMS = 4


def _int32(*names: str) -> tuple[Field, ...]:
    return tuple(Field(name, "int32_t") for name in names)


def _kind(enum: str) -> Field:
    return Field("kind", "uint32_t", doc=enum)


_NUM_INPUTS = Field("num_inputs", "int32_t", doc="2 (no bias slot) or 3 (bias slot, NULL when absent)")
_BIAS_BITS = Field("bias_bits", "int32_t", doc="64: int64 bias, int64 sums, 64-bit requantization; 32: all int32")
_CLAMP = (Field("act_min", "int32_t", doc="fused activation clamp, int16 range"), Field("act_max", "int32_t"))
_CHANNEL_QUANT = (Field("multiplier", "const int32_t*", doc="[out_ch]; equal entries when per-tensor"),
                  Field("shift", "const int32_t*", doc="[out_ch], positive = left"))
_MACS = Field("macs", "uint64_t", doc="multiply-accumulates of one call")

CONV_S16_PARAMS = Layout("tvmd_cmsis_conv_s16_params_t", (
    _kind("TVMD_CMSIS_KIND_CONV_S16 or TVMD_CMSIS_KIND_DEPTHWISE_CONV_S16"), _NUM_INPUTS,
    *_int32("batches", "in_h", "in_w", "in_ch", "out_h", "out_w", "out_ch", "filter_h", "filter_w"),
    Field("filter_in_ch", "int32_t", doc="CONV_2D: channels per group"),
    Field("groups", "int32_t", doc="CONV_2D: in_ch / filter_in_ch; depthwise: 1"),
    Field("depth_multiplier", "int32_t", doc="depthwise: out_ch / in_ch; CONV_2D: 1"),
    *_int32("stride_h", "stride_w", "dilation_h", "dilation_w", "pad_h", "pad_w"),
    _BIAS_BITS, *_CLAMP, _MACS, *_CHANNEL_QUANT,
), doc="CONV_2D (OHWI filter) and DEPTHWISE_CONV_2D ([1, KH, KW, out_ch] filter): int16 NHWC activations "
       "(zero points 0), int8 filters read in place (arm_convolve_s16 / arm_depthwise_conv_s16).")

FULLY_CONNECTED_S16_PARAMS = Layout("tvmd_cmsis_fully_connected_s16_params_t", (
    _kind("TVMD_CMSIS_KIND_FULLY_CONNECTED_S16"), _NUM_INPUTS, *_int32("batches", "accum_depth", "out_ch"),
    Field("filter_offset", "int32_t", doc="-weights zero point (0 when per-channel)"),
    _BIAS_BITS, *_CLAMP, _MACS, *_CHANNEL_QUANT,
), doc="FULLY_CONNECTED, int16 [batches, accum_depth] x int8 [out_ch, accum_depth]^T read in place "
       "(arm_fully_connected_s16).")

SOFTMAX_S16_PARAMS = Layout("tvmd_cmsis_softmax_s16_params_t", (
    _kind("TVMD_CMSIS_KIND_SOFTMAX_S16"), *_int32("rows", "depth"),
    Field("input_multiplier", "int32_t", doc="rescales differences so that [-65535, 0] covers [-10, 0]"),
    Field("input_left_shift", "int32_t", doc="its shift, positive = left"),
    Field("exp_lut", "const int16_t*", doc="[513] exp(x) on [-10, 0] (arm_softmax_s16's exp table)"),
    Field("one_over_one_plus_x_lut", "const int16_t*", doc="[513] 1 / (1 + x) on [0, 1]"),
), doc="SOFTMAX int16 -> int16 along the last axis (arm_softmax_s16: two interpolated lookup tables).")

TRANSPOSE_PARAMS = Layout("tvmd_cmsis_transpose_params_t", (
    _kind("TVMD_CMSIS_KIND_TRANSPOSE"),
    Field("itemsize", "int32_t", doc="bytes per element: 1 (int8) or 2 (int16)"),
    Field("out_shape", "int32_t", (TRANSPOSE_DIMS,), doc="output shape right-aligned to 4 (1 before)"),
    Field("strides", "int32_t", (TRANSPOSE_DIMS,), doc="input element stride of each output dimension"),
), doc="TRANSPOSE of up to 4 dimensions (arm_transpose_s8 / _s16): a permuted strided copy.")

SVDF_PARAMS = Layout("tvmd_cmsis_svdf_params_t", (
    _kind("TVMD_CMSIS_KIND_SVDF"),
    Field("state_bits", "int32_t",
          doc="16: int16 time weights and state (arm_svdf_state_s16_s8); 8: int8 (arm_svdf_s8)"),
    *_int32("batches", "n_input", "n_filter", "n_unit", "rank", "n_memory"),
    *_int32("input_zero_point", "state_zero_point", "output_zero_point"),
    Field("state_min", "int32_t", doc="the state type's range"), Field("state_max", "int32_t"),
    Field("scale1_multiplier", "int32_t", doc="feature matmul -> state"), Field("scale1_shift", "int32_t"),
    Field("scale2_multiplier", "int32_t", doc="time products + bias -> output"), Field("scale2_shift", "int32_t"),
    Field("has_bias", "int32_t"),
), doc="SVDF, int8 input and output, int16 or int8 activation state and time weights; the state buffer "
       "(a variable tensor) is updated in place.")

LSTM_PARAMS = Layout("tvmd_cmsis_lstm_params_t", (
    _kind("TVMD_CMSIS_KIND_LSTM_UNIDIRECTIONAL"),
    Field("activation_bits", "int32_t", doc="8: int8 activations, int32 biases (arm_lstm_unidirectional_s8); "
                                            "16: int16 activations, int64 biases (arm_lstm_unidirectional_s16)"),
    Field("time_major", "int32_t", doc="1: input [time, batch, features], all batches per step; 0: batch major"),
    *_int32("batches", "time_steps", "n_input", "n_state"),
    Field("hidden_zero_point", "int32_t"),
    Field("hidden_min", "int32_t", doc="the activation type's range"), Field("hidden_max", "int32_t"),
    Field("gate_input_multiplier", "int32_t", (LSTM_GATES,), doc="input x weights -> Q3.12, per gate"),
    Field("gate_input_shift", "int32_t", (LSTM_GATES,)),
    Field("gate_recurrent_multiplier", "int32_t", (LSTM_GATES,), doc="hidden x weights -> Q3.12, per gate"),
    Field("gate_recurrent_shift", "int32_t", (LSTM_GATES,)),
    *_int32("forget_multiplier", "forget_shift", "input_multiplier", "input_shift", "output_multiplier",
            "output_shift"),
    Field("cell_clip", "int32_t", doc="quantized cell clip"),
    Field("cell_clip_enabled", "int32_t", doc="1 when the model's cell_clip > 0"),
    Field("cell_tanh_multiplier", "int32_t", doc="tanh of the cell state: (x * multiplier + round) >> shift"),
    Field("cell_tanh_shift", "int32_t"),
    Field("kernel_sums", "const int32_t*",
          doc="int8: [2][4][n_state] the input and recurrent parts' constant terms (bias + zero-point offset x "
              "weight row sum, CMSIS-NN's kernel sums); int16: unused (zero points are 0, biases read in place)"),
), doc="UNIDIRECTIONAL_SEQUENCE_LSTM, int8 or int16 activations, int8 weights, int16 cell state; the hidden "
       "and cell state buffers (variable tensors) are updated in place.")
