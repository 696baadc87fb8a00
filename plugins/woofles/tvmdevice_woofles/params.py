"""The woofles kernels' parameter structs, declared once.

Each struct is a :class:`~tvmdevice.layout.Layout`: the build generates
``tvmd_woofles_params.h`` from these declarations (``device.PARAMS``;
``csrc/woofles_kernels.h`` includes it), and :mod:`tvmdevice_woofles.ops` fills each struct by member
name from the operator layer's op data (:class:`tvmdevice.params.ParamsStruct`).
Member names are the op data's field names; a member the op data lacks is
passed explicitly, so a member added here and forgotten there is an error at
prepare time, never a silent zero.

Pure Python (imports only :mod:`tvmdevice`): the build reads it.
"""

from __future__ import annotations

from tvmdevice.layout import Field, Layout

__all__ = ["CONV_PARAMS", "CONV16_PARAMS", "FC_PARAMS", "FC16_PARAMS", "POOL_PARAMS", "ADD_PARAMS", "MINMAX_PARAMS",
           "TRANSPOSE_CONV_PARAMS", "PAD_PARAMS", "COPY_PARAMS", "LAYOUTS", "ADD_RANK", "MINMAX_RANK"]
#: Dimensions the ADD address generator walks (TFLM's ADD broadcasts over up to 6).
ADD_RANK = 6
#: Dimensions the compare unit's address generator (MAXIMUM, MINIMUM) walks.
MINMAX_RANK = 4


def _i32(*names: str) -> tuple[Field, ...]:
    return tuple(Field(n, "int32_t") for n in names)


CONV_PARAMS = Layout(
    "tvmd_woofles_conv_params_t",
    (
        *_i32("batches", "in_h", "in_w", "in_ch"),
        *_i32("out_h", "out_w", "out_ch"),
        *_i32("filter_h", "filter_w"),
        Field("filter_in_ch", "int32_t", doc="CONV_2D: input channels per group (filter dim 3)"),
        Field("depth_multiplier", "int32_t", doc="DEPTHWISE_CONV_2D: out_ch / in_ch"),
        *_i32("stride_h", "stride_w", "dilation_h", "dilation_w"),
        *_i32("pad_h", "pad_w"),
        Field("input_offset", "int32_t", doc="-input zero point"),
        Field("output_offset", "int32_t", doc="output zero point"),
        *_i32("act_min", "act_max"),
        Field("num_inputs", "int32_t", doc="2 or 3: index of the output buffer"),
        Field("multiplier", "const int32_t*", doc="out_ch requantization multipliers"),
        Field("shift", "const int32_t*", doc="out_ch shifts; > 0 is a left shift"),
    ),
    doc="CONV_2D and DEPTHWISE_CONV_2D.  Buffers: input, filter, [bias or NULL], output.",
)

_BIAS_BITS = Field("bias_bits", "int32_t", doc="64: int64 bias, 64-bit accumulators and requantization; 32: int32")

CONV16_PARAMS = Layout(
    "tvmd_woofles_conv16_params_t",
    (*CONV_PARAMS.fields, _BIAS_BITS),
    doc="CONV_2D and DEPTHWISE_CONV_2D on int16 activations (int16x8; zero points 0).  "
        "Buffers: input, filter, [bias or NULL], output.",
)

FC_PARAMS = Layout(
    "tvmd_woofles_fc_params_t",
    (
        *_i32("batches", "accum_depth", "out_ch"),
        Field("input_offset", "int32_t", doc="-input zero point"),
        Field("filter_offset", "int32_t", doc="-weights zero point (0 for per-channel weights)"),
        Field("output_offset", "int32_t", doc="output zero point"),
        *_i32("act_min", "act_max"),
        Field("num_inputs", "int32_t", doc="2 or 3: index of the output buffer"),
        Field("multiplier", "const int32_t*", doc="out_ch multipliers (repeated for per-tensor weights)"),
        Field("shift", "const int32_t*", doc="out_ch shifts"),
    ),
    doc="FULLY_CONNECTED.  Buffers: input, weights [out_ch, accum_depth], [bias or NULL], output.",
)

FC16_PARAMS = Layout(
    "tvmd_woofles_fc16_params_t",
    (*FC_PARAMS.fields, _BIAS_BITS),
    doc="FULLY_CONNECTED on int16 activations (int16x8).  Buffers: input, weights, [bias or NULL], output.",
)

POOL_PARAMS = Layout(
    "tvmd_woofles_pool_params_t",
    (
        *_i32("batches", "in_h", "in_w", "channels", "out_h", "out_w"),
        *_i32("filter_h", "filter_w"),
        *_i32("stride_h", "stride_w", "pad_h", "pad_w"),
        *_i32("act_min", "act_max"),
    ),
    doc="AVERAGE_POOL_2D and MAX_POOL_2D, int8 and int16 (the kernel's name says which).  Buffers: input, output.",
)

ADD_PARAMS = Layout(
    "tvmd_woofles_add_params_t",
    (
        Field("out_shape", "int32_t", (ADD_RANK,), doc="output shape, padded with leading 1s"),
        Field("in1_strides", "int32_t", (ADD_RANK,), doc="element strides of input1 over out_shape; 0 where broadcast"),
        Field("in2_strides", "int32_t", (ADD_RANK,), doc="element strides of input2 over out_shape"),
        *_i32("in1_size", "in2_size"),
        *_i32("input1_offset", "input2_offset", "output_offset"),
        Field("left_shift", "int32_t", doc="both inputs are shifted left by this first"),
        *_i32("input1_multiplier", "input1_shift", "input2_multiplier", "input2_shift"),
        Field("output_multiplier", "int32_t"),
        Field("output_shift", "int32_t", doc="<= 0"),
        *_i32("act_min", "act_max"),
    ),
    doc=f"ADD, int8 and int16, with broadcasting up to rank {ADD_RANK}.  Buffers: input1, input2, output.",
)

MINMAX_PARAMS = Layout(
    "tvmd_woofles_minmax_params_t",
    (
        Field("out_shape", "int32_t", (MINMAX_RANK,), doc="output shape, padded with leading 1s"),
        Field("in1_strides", "int32_t", (MINMAX_RANK,),
              doc="element strides of input1 over out_shape; 0 where broadcast"),
        Field("in2_strides", "int32_t", (MINMAX_RANK,), doc="element strides of input2 over out_shape"),
        *_i32("in1_size", "in2_size"),
    ),
    doc=f"MAXIMUM and MINIMUM (raw int8) with broadcasting up to rank {MINMAX_RANK}.  Buffers: input1, input2, output.",
)

TRANSPOSE_CONV_PARAMS = Layout(
    "tvmd_woofles_transpose_conv_params_t",
    (
        *_i32("batches", "in_h", "in_w", "in_ch"),
        *_i32("out_h", "out_w", "out_ch"),
        *_i32("filter_h", "filter_w", "stride_h", "stride_w", "pad_h", "pad_w"),
        Field("input_offset", "int32_t", doc="-input zero point"),
        Field("output_offset", "int32_t", doc="output zero point"),
        *_i32("act_min", "act_max"),
        Field("num_inputs", "int32_t", doc="3 or 4: index of the output buffer"),
        Field("multiplier", "const int32_t*", doc="out_ch requantization multipliers"),
        Field("shift", "const int32_t*", doc="out_ch shifts; > 0 is a left shift"),
    ),
    doc="TRANSPOSE_CONV.  Buffers: output shape, filter [out_ch, KH, KW, in_ch], input, [bias or NULL], output.",
)

PAD_PARAMS = Layout(
    "tvmd_woofles_pad_params_t",
    (
        *_i32("batches", "in_h", "in_w", "channels", "out_h", "out_w"),
        Field("pad_top", "int32_t", doc="rows of border before the image"),
        Field("pad_left", "int32_t", doc="columns of border before the image"),
        Field("pad_value", "int32_t", doc="the border's raw value (PADV2's constant, else the zero point)"),
        Field("itemsize", "int32_t", doc="1 (int8) or 2 (int16)"),
        Field("num_inputs", "int32_t", doc="2 or 3: index of the output buffer"),
    ),
    doc="PAD and PADV2 as the window loader runs them: height and width borders of an [N, H, W, C] tensor.  "
        "Buffers: input, paddings, [constant_values], output (the output is the last).",
)

COPY_PARAMS = Layout(
    "tvmd_woofles_copy_params_t",
    (Field("nbytes", "uint64_t", doc="bytes the copy moves"),),
    doc="The executor's copy steps (tvmd_woofles_copy_to_device, _from_device).  Buffers: src, dst.",
)

#: Every params struct, in the order the generated header declares them.
LAYOUTS = (CONV_PARAMS, CONV16_PARAMS, FC_PARAMS, FC16_PARAMS, POOL_PARAMS, ADD_PARAMS, MINMAX_PARAMS,
           TRANSPOSE_CONV_PARAMS, PAD_PARAMS, COPY_PARAMS)
