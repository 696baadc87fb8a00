"""Params structs of the host's arithmetic and activation kernels (issue 12).

MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU, RELU, RELU6,
LEAKY_RELU, HARD_SWISH, REDUCE_MAX, ARG_MAX, ARG_MIN, TRANSPOSE_CONV,
BATCH_MATMUL and LOG_SOFTMAX; SUM takes MEAN's.
Kept beside :mod:`tvmdevice.host.kernel_table`, which lists their kernels;
light on purpose (the core's layout module only), like it.
"""

from __future__ import annotations

from ..layout import Field, Layout

__all__ = ["MINMAX_PARAMS", "SQUARED_DIFFERENCE_PARAMS", "PRELU_PARAMS", "RELU_PARAMS", "RELU6_PARAMS",
           "LEAKY_RELU_PARAMS", "HARD_SWISH_PARAMS", "REDUCE_MAX_PARAMS", "ARG_MIN_MAX_PARAMS", "TRANSPOSE_CONV_PARAMS",
           "BATCH_MATMUL_PARAMS", "LOG_SOFTMAX_PARAMS"]

#: Rank of the binary broadcast loop (TVMD_C_MAX_DIMS).
_DIMS = 6
#: Rank of the reduce loop (TVMD_C_MEAN_DIMS).
_REDUCE_DIMS = 5


def _int32(*names: str) -> tuple[Field, ...]:
    return tuple(Field(name, "int32_t") for name in names)


_BROADCAST = (
    Field("size", "int32_t", doc="output elements"),
    Field("out_shape", "int32_t", (_DIMS,), doc="output shape right-aligned to TVMD_C_MAX_DIMS, 1 before"),
    Field("in1_strides", "int32_t", (_DIMS,), doc="element strides, 0 along a broadcast dimension"),
    Field("in2_strides", "int32_t", (_DIMS,)),
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

REDUCE_MAX_PARAMS = Layout("tvmd_c_reduce_max_params_t", (
    Field("shape", "int32_t", (_REDUCE_DIMS,), doc="input shape right-aligned to TVMD_C_MEAN_DIMS, 1 before"),
    Field("reduced", "int32_t", (_REDUCE_DIMS,), doc="1 for each reduced dimension"),
), doc="REDUCE_MAX, int8 (raw values).")

ARG_MIN_MAX_PARAMS = Layout("tvmd_c_arg_min_max_params_t", (
    Field("outer_size", "int32_t", doc="product of the dimensions before the axis"),
    Field("axis_size", "int32_t", doc="the axis' extent"),
    Field("inner_size", "int32_t", doc="product of the dimensions after the axis"),
), doc="ARG_MAX and ARG_MIN, int8 input, int32 output.")

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
