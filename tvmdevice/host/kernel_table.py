"""The host device's kernel table: every C kernel, its params struct and its prepare step, declared once.

Each :class:`Kernel` names a portable C99 reference kernel ``tvmd_c_<name>``
in ``tvmdevice/host/csrc/``, the kernel keys it runs
(:func:`tvmdevice.ops.kernel_key`: an int8 operator's key is its type, an
int16x8 one's ``"<OP>:int16"``...), the params struct it takes (a
:class:`~tvmdevice.layout.Layout`, filled by member name from the operator's
op data) and the step of :mod:`tvmdevice.host.prepare` that adds what the C
loops need in their own form.  The order of :data:`KERNELS` is the order of
the extension's ``tvmd_kernel_t`` table.

Everything else is derived from here: the device's operator set
(:data:`OPERATORS`), the generic prepare of :mod:`tvmdevice.host.calls`
(:data:`KERNEL_BY_KEY`), the generated headers (:mod:`tvmdevice.host.headers`:
the structs, the prototypes, the ``TVMD_C_KERNELS`` X-macro list and the
constants below), at build time and for firmware export.

Light on purpose (the core's layout module only): the build imports it
without the rest of the package, and plugin discovery through the device type.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..layout import Field, Layout

if TYPE_CHECKING:  # pragma: no cover
    from ..ir import Graph, Operator
    from .prepare._common import KernelPlan

__all__ = ["Kernel", "KERNELS", "KERNEL_BY_NAME", "KERNEL_BY_KEY", "OPERATORS", "PARAMS_LAYOUTS", "CONSTANTS",
           "MAX_DIMS", "PAD_DIMS", "MEAN_DIMS", "MAX_CONCAT_INPUTS", "COPY_DIMS", "SHAPE_PAD_DIMS", "LSTM_GATES"]

# ------------------------------------------------- constants C shares
#: Rank of the ADD/MUL broadcast loop: TFLM's ADD broadcasts over 6 dimensions (MUL over 4).
MAX_DIMS = 6
#: Rank of the PAD loop (TFLM's PadParams hold 5 dimensions).
PAD_DIMS = 5
#: Rank of the MEAN loop (TFLM's reduce supports 5 dimensions).
MEAN_DIMS = 5
#: TFLM's kMaxInputNum for CONCATENATION.
MAX_CONCAT_INPUTS = 10
#: Rank of the strided copy loop (TFLM's TRANSPOSE takes 6 dimensions).
COPY_DIMS = 6
#: Rank of the PADV2 / int16 PAD loop (TFLM's PadParams hold 5 dimensions).
SHAPE_PAD_DIMS = 5
#: Per-gate arrays hold the input, forget, cell and output gates, in TFLite's operand order.
LSTM_GATES = 4

#: Macro name -> value, emitted in ``tvmd_c_kernels.h``.
CONSTANTS = {"TVMD_C_MAX_DIMS": MAX_DIMS, "TVMD_C_PAD_DIMS": PAD_DIMS, "TVMD_C_MEAN_DIMS": MEAN_DIMS,
             "TVMD_C_MAX_CONCAT_INPUTS": MAX_CONCAT_INPUTS, "TVMD_C_COPY_DIMS": COPY_DIMS,
             "TVMD_C_SHAPE_PAD_DIMS": SHAPE_PAD_DIMS}


# ---------------------------------------------------- params structs
# (grouped by operator family; member names are the op data's fields, or a prepare step's)
def _int32(*names: str) -> tuple[Field, ...]:
    return tuple(Field(name, "int32_t") for name in names)


# convolution, dense, pooling, softmax
_NUM_INPUTS = Field("num_inputs", "int32_t", doc="2 (no bias slot) or 3 (bias slot, NULL when absent)")
_CLAMP = (Field("act_min", "int32_t", doc="fused activation clamp, int8 range"), Field("act_max", "int32_t"))
_CHANNEL_QUANT = (Field("multiplier", "const int32_t*", doc="[out_ch] Q31 multipliers; equal when per-tensor"),
                  Field("shift", "const int32_t*", doc="[out_ch] shifts, positive = left"))

CONV_PARAMS: Layout = Layout("tvmd_c_conv_params_t", (
    _NUM_INPUTS,
    *_int32("batches", "in_h", "in_w", "in_ch", "out_h", "out_w", "out_ch", "filter_h", "filter_w"),
    Field("filter_in_ch", "int32_t", doc="CONV_2D: channels per group"),
    Field("groups", "int32_t", doc="CONV_2D: in_ch / filter_in_ch; depthwise: 1"),
    Field("depth_multiplier", "int32_t", doc="depthwise: out_ch / in_ch; CONV_2D: 1"),
    *_int32("stride_h", "stride_w", "dilation_h", "dilation_w"),
    Field("pad_h", "int32_t", doc="leading padding"), Field("pad_w", "int32_t"),
    Field("input_offset", "int32_t", doc="-input zero point"),
    Field("output_offset", "int32_t", doc="output zero point"),
    *_CLAMP, *_CHANNEL_QUANT,
), doc="CONV_2D (OHWI filter) and DEPTHWISE_CONV_2D ([1, KH, KW, out_ch] filter), NHWC int8.")

FULLY_CONNECTED_PARAMS: Layout = Layout("tvmd_c_fully_connected_params_t", (
    _NUM_INPUTS, *_int32("batches", "accum_depth", "out_ch"),
    Field("input_offset", "int32_t", doc="-input zero point"),
    Field("filter_offset", "int32_t", doc="-weights zero point (0 when per-channel)"),
    Field("output_offset", "int32_t", doc="output zero point"),
    *_CLAMP,
    Field("quant_stride", "int32_t", doc="1: multiplier and shift per channel; 0: one of each (per-tensor)"),
    Field("multiplier", "const int32_t*", doc="[out_ch], or [1] when quant_stride is 0: Q31 multipliers"),
    Field("shift", "const int32_t*", doc="like multiplier: shifts, positive = left"),
), doc="FULLY_CONNECTED, [batches, accum_depth] x [out_ch, accum_depth]^T, int8.")

POOL_PARAMS: Layout = Layout("tvmd_c_pool_params_t", (
    *_int32("batches", "in_h", "in_w", "channels", "out_h", "out_w", "filter_h", "filter_w", "stride_h", "stride_w",
            "pad_h", "pad_w"),
    *_CLAMP,
), doc="AVERAGE_POOL_2D and MAX_POOL_2D, NHWC int8.")

SOFTMAX_PARAMS: Layout = Layout("tvmd_c_softmax_params_t", (
    *_int32("rows", "depth"),
    Field("input_multiplier", "int32_t", doc="beta * input scale as a Q31 multiplier (Q5.26 differences)"),
    Field("input_left_shift", "int32_t"),
    Field("diff_min", "int32_t", doc="differences to the row maximum below this give -128"),
), doc="SOFTMAX int8 -> int8 along the last axis (TFLM's gemmlowp path).")

TRANSPOSE_CONV_PARAMS = Layout("tvmd_c_transpose_conv_params_t", (
    Field("num_inputs", "int32_t", doc="3 (no bias slot) or 4 (bias slot, NULL when absent)"),
    *_int32("batches", "in_h", "in_w", "in_ch", "out_h", "out_w", "out_ch", "filter_h", "filter_w", "stride_h",
            "stride_w"),
    Field("pad_h", "int32_t", doc="leading padding of the forward convolution"), Field("pad_w", "int32_t"),
    Field("input_offset", "int32_t", doc="-input zero point"),
    Field("output_offset", "int32_t", doc="output zero point"),
    Field("act_min", "int32_t", doc="fused activation clamp, int8 range"), Field("act_max", "int32_t"),
    Field("multiplier", "const int32_t*", doc="[out_ch] Q31 multipliers"),
    Field("shift", "const int32_t*", doc="[out_ch] shifts, positive = left"),
), doc="TRANSPOSE_CONV, NHWC int8, OHWI filter; buffers: output shape, filter, input, [bias], output.")

BATCH_MATMUL_PARAMS = Layout("tvmd_c_batch_matmul_params_t", (
    Field("out_batch", "int32_t", (3,), doc="the output's batch dimensions right-aligned to 3, 1 before"),
    Field("lhs_batch_strides", "int32_t", (3,), doc="lhs elements per batch step, 0 along a broadcast one"),
    Field("rhs_batch_strides", "int32_t", (3,)),
    *_int32("rows", "cols", "depth"),
    Field("adj_x", "int32_t", doc="1: lhs is [..., depth, rows]"),
    Field("adj_y", "int32_t", doc="1: rhs is [..., cols, depth]"),
    Field("lhs_offset", "int32_t", doc="-lhs zero point"),
    Field("rhs_offset", "int32_t", doc="-rhs zero point"),
    Field("output_offset", "int32_t", doc="output zero point"),
    *_int32("output_multiplier", "output_shift"),
), doc="BATCH_MATMUL, int8, batch dimensions broadcast.")

LOG_SOFTMAX_PARAMS = Layout("tvmd_c_log_softmax_params_t", (
    *_int32("rows", "depth"),
    Field("input_multiplier", "int32_t", doc="input scale as a Q31 multiplier (Q5.26 differences)"),
    Field("input_left_shift", "int32_t"),
    Field("reverse_scaling_divisor", "int32_t", doc="2**(31 - input_left_shift) / input_multiplier, below one"),
    Field("reverse_scaling_right_shift", "int32_t", doc="its right shift (positive)"),
    Field("diff_min", "int32_t", doc="differences to the row maximum below this are left out"),
), doc="LOG_SOFTMAX int8 -> int8 along the last axis (output scale 16/256, zero point 127).")

# elementwise and broadcast
ELEMENTWISE_PARAMS: Layout = Layout("tvmd_c_elementwise_params_t", (
    Field("size", "int32_t", doc="output elements"),
    Field("out_shape", "int32_t", (MAX_DIMS,), doc="output shape right-aligned to TVMD_C_MAX_DIMS, 1 before"),
    Field("in1_strides", "int32_t", (MAX_DIMS,), doc="element strides, 0 along a broadcast dimension"),
    Field("in2_strides", "int32_t", (MAX_DIMS,)),
    *_int32("input1_offset", "input2_offset", "output_offset"),
    Field("left_shift", "int32_t", doc="ADD: 20 for int8; MUL: 0"),
    *_int32("input1_multiplier", "input1_shift", "input2_multiplier", "input2_shift", "output_multiplier",
            "output_shift"),
    *_CLAMP,
), doc="ADD and MUL, int8, with broadcasting.")

_BROADCAST = (
    Field("size", "int32_t", doc="output elements"),
    Field("out_shape", "int32_t", (MAX_DIMS,), doc="output shape right-aligned to TVMD_C_MAX_DIMS, 1 before"),
    Field("in1_strides", "int32_t", (MAX_DIMS,), doc="element strides, 0 along a broadcast dimension"),
    Field("in2_strides", "int32_t", (MAX_DIMS,)),
)

MINMAX_PARAMS = Layout("tvmd_c_minmax_params_t", _BROADCAST,
                       doc="MAXIMUM and MINIMUM, int8, with broadcasting (raw values).")

SQUARED_DIFFERENCE_PARAMS = Layout("tvmd_c_squared_difference_params_t", (
    *_BROADCAST,
    *_int32("input1_offset", "input2_offset", "output_offset"),
    Field("left_shift", "int32_t", doc="7 for int8"),
    *_int32("input1_multiplier", "input1_shift", "input2_multiplier", "input2_shift", "output_multiplier",
            "output_shift"),
), doc="SQUARED_DIFFERENCE, int8, with broadcasting.")

PRELU_PARAMS = Layout("tvmd_c_prelu_params_t", (
    *_BROADCAST,
    Field("input_offset", "int32_t", doc="-input zero point"),
    Field("alpha_offset", "int32_t", doc="-alpha zero point"),
    Field("output_offset", "int32_t", doc="output zero point"),
    Field("output_multiplier_1", "int32_t", doc="input scale / output scale (non-negative inputs)"),
    Field("output_shift_1", "int32_t"),
    Field("output_multiplier_2", "int32_t", doc="input scale * alpha scale / output scale (negative inputs)"),
    Field("output_shift_2", "int32_t"),
), doc="PRELU, int8; in2 is alpha, broadcast to the input.")

# activations and quantization
QUANTIZE_PARAMS: Layout = Layout("tvmd_c_quantize_params_t", (
    Field("size", "int32_t", doc="elements"),
    Field("output_scale", "float", doc="float -> int8: the output scale"),
    Field("output_offset", "int32_t", doc="output zero point"),
    Field("input_offset", "int32_t", doc="int8 -> int8: -input zero point"),
    Field("multiplier", "int32_t", doc="int8 -> int8: input scale / output scale"),
    Field("shift", "int32_t"),
), doc="QUANTIZE float32 -> int8 and int8 -> int8.")

DEQUANTIZE_PARAMS = Layout("tvmd_c_dequantize_params_t", (
    Field("size", "int32_t", doc="elements"),
    Field("scale", "float", doc="the input scale"),
    Field("zero_point", "int32_t", doc="the input zero point"),
), doc="DEQUANTIZE int8 -> float32.")

ACTIVATION_PARAMS = Layout("tvmd_c_activation_params_t", (
    Field("size", "int32_t", doc="elements"),
    Field("input_zero_point", "int32_t"),
    Field("input_range_radius", "int32_t", doc="|input - zero point| at or past which the output saturates"),
    Field("input_multiplier", "int32_t", doc="rescales input - zero point to Q4.27"),
    Field("input_left_shift", "int32_t"),
), doc="LOGISTIC and TANH, int8 (TFLM's integer path).")

RELU_PARAMS = Layout("tvmd_c_relu_params_t", (
    Field("size", "int32_t", doc="elements"),
    Field("input_offset", "int32_t", doc="the input zero point (subtracted)"),
    Field("output_offset", "int32_t", doc="the output zero point"),
    Field("output_multiplier", "int32_t", doc="input scale / output scale"),
    Field("output_shift", "int32_t"),
    Field("act_min", "int32_t", doc="clamp: the output's quantized 0"),
    Field("act_max", "int32_t"),
), doc="RELU, int8.")

RELU6_PARAMS = Layout("tvmd_c_relu6_params_t", (
    Field("size", "int32_t", doc="elements"),
    Field("zero", "int32_t", doc="the input's quantized 0"),
    Field("six", "int32_t", doc="the input's quantized 6"),
), doc="RELU6, int8: the raw input clamped (no rescale).")

LEAKY_RELU_PARAMS = Layout("tvmd_c_leaky_relu_params_t", (
    Field("size", "int32_t", doc="elements"),
    Field("input_offset", "int32_t", doc="the input zero point (subtracted)"),
    Field("output_offset", "int32_t", doc="the output zero point"),
    Field("output_multiplier_alpha", "int32_t", doc="input scale * alpha / output scale; negative with alpha"),
    Field("output_shift_alpha", "int32_t"),
    Field("output_multiplier_identity", "int32_t", doc="input scale / output scale"),
    Field("output_shift_identity", "int32_t"),
), doc="LEAKY_RELU, int8.")

HARD_SWISH_PARAMS = Layout("tvmd_c_hard_swish_params_t", (
    Field("size", "int32_t", doc="elements"),
    Field("input_zero_point", "int32_t"),
    Field("output_zero_point", "int32_t"),
    Field("reluish_multiplier_fixedpoint_int16", "int32_t", doc="Q15: hires input scale -> 3.0 as 32768"),
    Field("reluish_multiplier_exponent", "int32_t"),
    Field("output_multiplier_fixedpoint_int16", "int32_t", doc="Q15: hires input scale -> output scale"),
    Field("output_multiplier_exponent", "int32_t", doc="<= 0"),
), doc="HARD_SWISH, int8 (TFLM's int16 fixed-point path).")

# reductions
MEAN_PARAMS = Layout("tvmd_c_mean_params_t", (
    Field("shape", "int32_t", (MEAN_DIMS,), doc="input shape right-aligned to TVMD_C_MEAN_DIMS, 1 before"),
    Field("reduced", "int32_t", (MEAN_DIMS,), doc="1 for each reduced dimension"),
    Field("count", "int32_t", doc="elements averaged into each output"),
    Field("input_offset", "int32_t", doc="-input zero point"),
    Field("output_offset", "int32_t", doc="output zero point"),
    Field("multiplier", "int32_t", doc="input scale / output scale / count, as TFLM folds it"),
    Field("shift", "int32_t"),
), doc="MEAN, int8 (TFLM's QuantizedMeanOrSum).")

REDUCE_MAX_PARAMS = Layout("tvmd_c_reduce_max_params_t", (
    Field("shape", "int32_t", (MEAN_DIMS,), doc="input shape right-aligned to TVMD_C_MEAN_DIMS, 1 before"),
    Field("reduced", "int32_t", (MEAN_DIMS,), doc="1 for each reduced dimension"),
), doc="REDUCE_MAX, int8 (raw values).")

ARG_MIN_MAX_PARAMS = Layout("tvmd_c_arg_min_max_params_t", (
    Field("outer_size", "int32_t", doc="product of the dimensions before the axis"),
    Field("axis_size", "int32_t", doc="the axis' extent"),
    Field("inner_size", "int32_t", doc="product of the dimensions after the axis"),
), doc="ARG_MAX and ARG_MIN, int8 input, int32 output.")

# data movement
PAD_PARAMS = Layout("tvmd_c_pad_params_t", (
    Field("in_shape", "int32_t", (PAD_DIMS,), doc="input shape right-aligned to TVMD_C_PAD_DIMS, 1 before"),
    Field("out_shape", "int32_t", (PAD_DIMS,)),
    Field("before", "int32_t", (PAD_DIMS,), doc="leading padding per dimension"),
    Field("pad_value", "int32_t", doc="the output zero point"),
), doc="PAD, int8: values moved, padding filled with the output zero point.")

CONCATENATION_PARAMS = Layout("tvmd_c_concatenation_params_t", (
    Field("inputs_count", "int32_t", doc="inputs, at most TVMD_C_MAX_CONCAT_INPUTS"),
    Field("outer_size", "int32_t", doc="blocks per input (product of the dimensions before the axis)"),
    Field("copy_sizes", "int32_t", (MAX_CONCAT_INPUTS,), doc="bytes per block of each input"),
), doc="CONCATENATION: each output block is the inputs' blocks, in input order.")

COPY_PARAMS = Layout("tvmd_c_copy_params_t", (
    Field("num_inputs", "int32_t", doc="1, or 2 with the shape tensor"),
    Field("nbytes", "int32_t", doc="bytes copied"),
), doc="RESHAPE of a tensor it cannot alias (a constant): a copy.")

_ITEMSIZE = Field("itemsize", "int32_t", doc="bytes per element: 1 (int8) or 2 (int16)")

STRIDED_COPY_PARAMS = Layout("tvmd_c_strided_copy_params_t", (
    Field("num_inputs", "int32_t", doc="the operator's inputs; the output is buffers[num_inputs]"),
    Field("out_shape", "int32_t", (COPY_DIMS,), doc="output shape right-aligned to TVMD_C_COPY_DIMS, 1 before"),
    Field("in_strides", "int32_t", (COPY_DIMS,), doc="input element step per output dimension (0: repeat)"),
    Field("offset", "int32_t", doc="input element of output element 0"),
    _ITEMSIZE,
), doc="TRANSPOSE, SLICE, STRIDED_SLICE, BROADCAST_TO: out[i] = in[offset + sum(i[d] * in_strides[d])].")

SPLIT_PARAMS = Layout("tvmd_c_split_params_t", (
    Field("num_inputs", "int32_t", doc="the operator's inputs; outputs follow them in buffers"),
    Field("input_index", "int32_t", doc="the data input's position among the inputs"),
    Field("outputs_count", "int32_t"),
    Field("outer_size", "int32_t", doc="blocks of the input"),
    Field("copy_bytes", "const int32_t*", doc="[outputs_count] bytes per block of each output"),
), doc="SPLIT, SPLIT_V, UNPACK: each input block is one block per output, in output order.")

JOIN_PARAMS = Layout("tvmd_c_join_params_t", (
    Field("inputs_count", "int32_t"),
    Field("outer_size", "int32_t", doc="blocks of the output"),
    Field("copy_bytes", "const int32_t*", doc="[inputs_count] bytes per block of each input"),
), doc="PACK and int16 CONCATENATION: each output block is one block per input, in input order.")

PAD_ANY_PARAMS = Layout("tvmd_c_pad_any_params_t", (
    Field("num_inputs", "int32_t", doc="2 (PAD) or 3 (PADV2); the output is buffers[num_inputs]"),
    Field("in_shape", "int32_t", (SHAPE_PAD_DIMS,), doc="right-aligned to TVMD_C_SHAPE_PAD_DIMS, 1 before"),
    Field("out_shape", "int32_t", (SHAPE_PAD_DIMS,)),
    Field("before", "int32_t", (SHAPE_PAD_DIMS,), doc="leading padding per dimension"),
    Field("pad_value", "int32_t", doc="the fill value, in the element type"),
    _ITEMSIZE,
), doc="PADV2 (int8, int16) and int16 PAD.")

GATHER_PARAMS = Layout("tvmd_c_gather_params_t", (
    Field("batch_size", "int32_t"), Field("outer_size", "int32_t"), Field("axis_size", "int32_t"),
    Field("coord_size", "int32_t"), Field("inner_size", "int32_t", doc="elements copied per coordinate"),
), doc="GATHER, int8 data, int32 positions (an out-of-range one fails the call, as in TFLM).")

RESIZE_PARAMS = Layout("tvmd_c_resize_params_t", (
    Field("batches", "int32_t"), Field("in_h", "int32_t"), Field("in_w", "int32_t"), Field("channels", "int32_t"),
    Field("out_h", "int32_t"), Field("out_w", "int32_t"), _ITEMSIZE,
    Field("rows", "const int32_t*", doc="nearest: [out_h] input rows; bilinear: [out_h][y0, y1, y in Q10]"),
    Field("cols", "const int32_t*", doc="nearest: [out_w] input columns; bilinear: [out_w][x0, x1, x in Q10]"),
), doc="RESIZE_NEAREST_NEIGHBOR (int8, int16) and RESIZE_BILINEAR (int8), NHWC.")

# recurrent
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

# int16x8 variants
_BIAS_BITS = Field("bias_bits", "int32_t", doc="64: int64 bias, int64 sums, 64-bit requantization; 32: all int32")

CONV_S16_PARAMS = Layout("tvmd_c_conv_s16_params_t", (*CONV_PARAMS.fields, _BIAS_BITS),
                         doc="CONV_2D and DEPTHWISE_CONV_2D, int16 NHWC activations, int8 filters (offsets 0).")
FULLY_CONNECTED_S16_PARAMS = Layout("tvmd_c_fully_connected_s16_params_t", (*FULLY_CONNECTED_PARAMS.fields, _BIAS_BITS),
                                    doc="FULLY_CONNECTED, int16 activations, int8 weights (input/output offsets 0).")

SOFTMAX_S16_PARAMS = Layout("tvmd_c_softmax_s16_params_t", (
    Field("rows", "int32_t"), Field("depth", "int32_t"),
    Field("input_multiplier", "int32_t", doc="rescales differences so that [-65535, 0] covers [-10, 0]"),
    Field("input_left_shift", "int32_t", doc="its shift, positive = left"),
    Field("exp_lut", "const int16_t*", doc="[513] exp(x) on [-10, 0], Q0.15"),
    Field("one_over_one_plus_x_lut", "const int16_t*", doc="[513] 1 / (1 + x) on [0, 1], Q0.15"),
), doc="SOFTMAX int16 -> int16 along the last axis (TFLM's SoftmaxInt16).")

ACTIVATION_S16_PARAMS = Layout("tvmd_c_activation_s16_params_t", (
    Field("size", "int32_t", doc="elements"),
    Field("input_multiplier", "int32_t", doc="0 for a power-of-two input scale (then 3 << input_left_shift)"),
    Field("input_left_shift", "int32_t", doc="the rounding right shift after the multiplication"),
), doc="LOGISTIC and TANH on int16 (TFLM's table interpolation).")


# ------------------------------------------------------------ kernels
@dataclass(frozen=True)
class Kernel:
    """One C reference kernel.

    :param name: the kernel's name; the C function is ``tvmd_c_<name>``.
    :param op_types: the kernel keys it runs (:func:`tvmdevice.ops.kernel_key`).
        The first kernel of :data:`KERNELS` that lists a key prepares it;
        its step may name the kernel the op data calls for instead (int16
        PAD runs on ``pad_any``, an int8 QUANTIZE on ``requantize_s8``...).
    :param layout: its params struct.
    :param source: the file of ``tvmdevice/host/csrc/`` that defines it.
    :param prepare: ``"<module>.<function>"`` in :mod:`tvmdevice.host.prepare`:
        ``function(graph, op, op_data) -> KernelPlan`` adds the members the
        op data does not hold and the host's limits (imported on first use,
        so this table stays light); ``None`` when the op data fills the
        struct alone.
    """

    name: str
    op_types: tuple[str, ...]
    layout: Layout
    source: str
    prepare: str | None = None

    @property
    def symbol(self) -> str:
        """The C function, ``tvmd_c_<name>``."""
        return f"tvmd_c_{self.name}"

    def prepare_step(self) -> "Callable[[Graph, Operator, Any], KernelPlan] | None":
        """The prepare function named by :attr:`prepare`."""
        if self.prepare is None:
            return None
        module, function = self.prepare.rsplit(".", 1)
        return getattr(importlib.import_module(f"{__package__}.prepare.{module}"), function)


_K = Kernel

#: Every kernel, in the order of the extension's kernel table.
KERNELS: tuple[Kernel, ...] = (
    _K("conv2d_s8", ("CONV_2D",), CONV_PARAMS, "conv.c", "windowed.conv"),
    _K("depthwise_conv2d_s8", ("DEPTHWISE_CONV_2D",), CONV_PARAMS, "conv.c", "windowed.conv"),
    _K("fully_connected_s8", ("FULLY_CONNECTED",), FULLY_CONNECTED_PARAMS, "fully_connected.c",
       "windowed.fully_connected"),
    _K("avg_pool2d_s8", ("AVERAGE_POOL_2D",), POOL_PARAMS, "pooling.c", "windowed.pool"),
    _K("max_pool2d_s8", ("MAX_POOL_2D",), POOL_PARAMS, "pooling.c", "windowed.pool"),
    _K("softmax_s8", ("SOFTMAX",), SOFTMAX_PARAMS, "softmax.c"),
    _K("add_s8", ("ADD",), ELEMENTWISE_PARAMS, "elementwise.c", "elementwise.elementwise"),
    _K("mul_s8", ("MUL",), ELEMENTWISE_PARAMS, "elementwise.c", "elementwise.elementwise"),
    _K("pad_s8", ("PAD",), PAD_PARAMS, "pad.c", "movement.pad"),
    _K("concatenation_s8", ("CONCATENATION",), CONCATENATION_PARAMS, "concatenation.c", "movement.concatenation"),
    _K("mean_s8", ("MEAN",), MEAN_PARAMS, "mean.c", "reduce.reduced_axes"),
    _K("quantize_f32_s8", ("QUANTIZE",), QUANTIZE_PARAMS, "quantize.c", "elementwise.quantize"),
    _K("requantize_s8", ("QUANTIZE",), QUANTIZE_PARAMS, "quantize.c"),
    _K("dequantize_s8_f32", ("DEQUANTIZE",), DEQUANTIZE_PARAMS, "quantize.c"),
    _K("logistic_s8", ("LOGISTIC",), ACTIVATION_PARAMS, "activations.c"),
    _K("tanh_s8", ("TANH",), ACTIVATION_PARAMS, "activations.c"),
    _K("reshape", ("RESHAPE", "SQUEEZE", "EXPAND_DIMS"), COPY_PARAMS, "reshape.c", "movement.reshape"),
    _K("strided_copy", ("TRANSPOSE", "SLICE", "STRIDED_SLICE", "BROADCAST_TO"), STRIDED_COPY_PARAMS, "movement.c",
       "movement.strided_copy"),
    _K("split", ("SPLIT", "SPLIT_V", "UNPACK"), SPLIT_PARAMS, "movement.c", "movement.split"),
    _K("join", ("PACK", "CONCATENATION"), JOIN_PARAMS, "movement.c", "movement.join"),
    _K("pad_any", ("PAD", "PADV2"), PAD_ANY_PARAMS, "movement.c", "movement.pad_any"),
    _K("gather_s8", ("GATHER",), GATHER_PARAMS, "gather.c"),
    _K("resize_nearest", ("RESIZE_NEAREST_NEIGHBOR",), RESIZE_PARAMS, "resize.c"),
    _K("resize_bilinear_s8", ("RESIZE_BILINEAR",), RESIZE_PARAMS, "resize.c"),
    _K("maximum_s8", ("MAXIMUM",), MINMAX_PARAMS, "minmax.c", "elementwise.broadcast"),
    _K("minimum_s8", ("MINIMUM",), MINMAX_PARAMS, "minmax.c", "elementwise.broadcast"),
    _K("squared_difference_s8", ("SQUARED_DIFFERENCE",), SQUARED_DIFFERENCE_PARAMS, "squared_difference.c",
       "elementwise.broadcast"),
    _K("prelu_s8", ("PRELU",), PRELU_PARAMS, "prelu.c", "elementwise.broadcast"),
    _K("relu_s8", ("RELU", "RELU_N1_TO_1"), RELU_PARAMS, "relu.c"),
    _K("relu6_s8", ("RELU6",), RELU6_PARAMS, "relu.c"),
    _K("leaky_relu_s8", ("LEAKY_RELU",), LEAKY_RELU_PARAMS, "relu.c"),
    _K("hard_swish_s8", ("HARD_SWISH",), HARD_SWISH_PARAMS, "relu.c"),
    _K("sum_s8", ("SUM",), MEAN_PARAMS, "reduce.c", "reduce.reduced_axes"),
    _K("reduce_max_s8", ("REDUCE_MAX",), REDUCE_MAX_PARAMS, "reduce.c", "reduce.reduced_axes"),
    _K("arg_max_s8", ("ARG_MAX",), ARG_MIN_MAX_PARAMS, "reduce.c"),
    _K("arg_min_s8", ("ARG_MIN",), ARG_MIN_MAX_PARAMS, "reduce.c"),
    _K("transpose_conv_s8", ("TRANSPOSE_CONV",), TRANSPOSE_CONV_PARAMS, "transpose_conv.c"),
    _K("batch_matmul_s8", ("BATCH_MATMUL",), BATCH_MATMUL_PARAMS, "batch_matmul.c"),
    _K("log_softmax_s8", ("LOG_SOFTMAX",), LOG_SOFTMAX_PARAMS, "log_softmax.c"),
    _K("lstm_s8", ("UNIDIRECTIONAL_SEQUENCE_LSTM",), LSTM_PARAMS, "lstm.c", "recurrent.lstm"),
    _K("lstm_s16", ("UNIDIRECTIONAL_SEQUENCE_LSTM",), LSTM_PARAMS, "lstm.c"),
    _K("svdf_s8_s16", ("SVDF",), SVDF_PARAMS, "svdf.c", "recurrent.svdf"),
    _K("svdf_s8_s8", ("SVDF",), SVDF_PARAMS, "svdf.c"),
    # the int16x8 variants, and SUB
    _K("quantize_f32_s16", ("QUANTIZE:float32->int16",), QUANTIZE_PARAMS, "quantize_s16.c"),
    _K("requantize_s8_s16", ("QUANTIZE:int8->int16",), QUANTIZE_PARAMS, "quantize_s16.c"),
    _K("requantize_s16_s8", ("QUANTIZE:int16->int8",), QUANTIZE_PARAMS, "quantize_s16.c"),
    _K("requantize_s16_s16", ("QUANTIZE:int16->int16",), QUANTIZE_PARAMS, "quantize_s16.c"),
    _K("sub_s8", ("SUB",), ELEMENTWISE_PARAMS, "elementwise.c", "elementwise.elementwise"),
    _K("add_s16", ("ADD:int16",), ELEMENTWISE_PARAMS, "elementwise_s16.c", "elementwise.elementwise"),
    _K("sub_s16", ("SUB:int16",), ELEMENTWISE_PARAMS, "elementwise_s16.c", "elementwise.elementwise"),
    _K("mul_s16", ("MUL:int16",), ELEMENTWISE_PARAMS, "elementwise_s16.c", "elementwise.elementwise"),
    _K("conv2d_s16", ("CONV_2D:int16",), CONV_S16_PARAMS, "conv_s16.c", "windowed.conv"),
    _K("depthwise_conv2d_s16", ("DEPTHWISE_CONV_2D:int16",), CONV_S16_PARAMS, "conv_s16.c", "windowed.conv"),
    _K("fully_connected_s16", ("FULLY_CONNECTED:int16",), FULLY_CONNECTED_S16_PARAMS, "fully_connected_s16.c",
       "windowed.fully_connected"),
    _K("avg_pool2d_s16", ("AVERAGE_POOL_2D:int16",), POOL_PARAMS, "pooling_s16.c", "windowed.pool"),
    _K("max_pool2d_s16", ("MAX_POOL_2D:int16",), POOL_PARAMS, "pooling_s16.c", "windowed.pool"),
    _K("softmax_s8_s16", ("SOFTMAX:int8->int16",), SOFTMAX_PARAMS, "softmax_s16.c"),
    _K("softmax_s16", ("SOFTMAX:int16",), SOFTMAX_S16_PARAMS, "softmax_s16.c"),
    _K("logistic_s16", ("LOGISTIC:int16",), ACTIVATION_S16_PARAMS, "activations_s16.c"),
    _K("tanh_s16", ("TANH:int16",), ACTIVATION_S16_PARAMS, "activations_s16.c"),
    _K("requantize_s16_s32", ("QUANTIZE:int16->int32",), QUANTIZE_PARAMS, "quantize_s16.c"),
)

#: Kernel name -> kernel.
KERNEL_BY_NAME: dict[str, Kernel] = {k.name: k for k in KERNELS}
#: Kernel key -> the first kernel that lists it: the one whose step prepares the operator.
KERNEL_BY_KEY: dict[str, Kernel] = {}
for _kernel in KERNELS:
    for _key in _kernel.op_types:
        KERNEL_BY_KEY.setdefault(_key, _kernel)
del _kernel, _key
#: Kernel keys the host's C kernels run (RESHAPE, SQUEEZE and EXPAND_DIMS are views unless their input is a constant).
OPERATORS: frozenset[str] = frozenset(KERNEL_BY_KEY)
#: Every params struct, each once, in first-use order.
PARAMS_LAYOUTS: tuple[Layout, ...] = tuple(dict.fromkeys(k.layout for k in KERNELS))
