"""The host device's C kernels and their params structs: everything C sees, declared once.

Each :class:`Kernel` names a portable C99 reference kernel ``tvmd_c_<name>``
in ``tvmdevice/host/csrc/`` and the params struct it takes (a
:class:`~tvmdevice.layout.Layout`, filled by member name from the operator's
op data by :mod:`tvmdevice.host.calls`).  The order of :data:`KERNELS` is the
order of the extension's ``tvmd_kernel_t`` table.

The generated headers (:mod:`tvmdevice.host.headers`: the structs, the
prototypes, the ``TVMD_C_KERNELS`` X-macro list and the constants below) come
from here, at build time and for firmware export.

Light on purpose (the core's layout module only): the build imports it
without the rest of the package.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..layout import Field, Layout
from .arith_layouts import (
    ARG_MIN_MAX_PARAMS,
    BATCH_MATMUL_PARAMS,
    HARD_SWISH_PARAMS,
    LEAKY_RELU_PARAMS,
    LOG_SOFTMAX_PARAMS,
    MINMAX_PARAMS,
    PRELU_PARAMS,
    REDUCE_MAX_PARAMS,
    RELU6_PARAMS,
    RELU_PARAMS,
    SQUARED_DIFFERENCE_PARAMS,
    TRANSPOSE_CONV_PARAMS,
)
from .recurrent_params import LSTM_PARAMS, SVDF_PARAMS
from .shape_layouts import CONSTANTS as _SHAPE_CONSTANTS
from .shape_layouts import SHAPE_KERNELS

__all__ = ["Kernel", "KERNELS", "INT16_KERNELS", "INT16_OPERATORS", "KERNEL_BY_NAME", "PARAMS_LAYOUTS", "MAX_DIMS",
           "PAD_DIMS", "MEAN_DIMS", "MAX_CONCAT_INPUTS", "CONSTANTS"]

# ------------------------------------------------- constants C shares
#: Rank of the ADD/MUL broadcast loop: TFLM's ADD broadcasts over 6 dimensions (MUL over 4).
MAX_DIMS = 6
#: Rank of the PAD loop (TFLM's PadParams hold 5 dimensions).
PAD_DIMS = 5
#: Rank of the MEAN loop (TFLM's reduce supports 5 dimensions).
MEAN_DIMS = 5
#: TFLM's kMaxInputNum for CONCATENATION.
MAX_CONCAT_INPUTS = 10

#: Macro name -> value, emitted in ``tvmd_c_kernels.h``.
CONSTANTS = {"TVMD_C_MAX_DIMS": MAX_DIMS, "TVMD_C_PAD_DIMS": PAD_DIMS, "TVMD_C_MEAN_DIMS": MEAN_DIMS,
             "TVMD_C_MAX_CONCAT_INPUTS": MAX_CONCAT_INPUTS, **_SHAPE_CONSTANTS}


def _int32(*names: str) -> tuple[Field, ...]:
    return tuple(Field(name, "int32_t") for name in names)


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

MEAN_PARAMS = Layout("tvmd_c_mean_params_t", (
    Field("shape", "int32_t", (MEAN_DIMS,), doc="input shape right-aligned to TVMD_C_MEAN_DIMS, 1 before"),
    Field("reduced", "int32_t", (MEAN_DIMS,), doc="1 for each reduced dimension"),
    Field("count", "int32_t", doc="elements averaged into each output"),
    Field("input_offset", "int32_t", doc="-input zero point"),
    Field("output_offset", "int32_t", doc="output zero point"),
    Field("multiplier", "int32_t", doc="input scale / output scale / count, as TFLM folds it"),
    Field("shift", "int32_t"),
), doc="MEAN, int8 (TFLM's QuantizedMeanOrSum).")

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

COPY_PARAMS = Layout("tvmd_c_copy_params_t", (
    Field("num_inputs", "int32_t", doc="1, or 2 with the shape tensor"),
    Field("nbytes", "int32_t", doc="bytes copied"),
), doc="RESHAPE of a tensor it cannot alias (a constant): a copy.")


@dataclass(frozen=True)
class Kernel:
    """One C reference kernel.

    :param name: the kernel's name; the C function is ``tvmd_c_<name>``.
    :param op_types: the TFLite operators it runs.
    :param layout: its params struct.
    :param source: the file of ``tvmdevice/host/csrc/`` that defines it.
    """

    name: str
    op_types: tuple[str, ...]
    layout: Layout
    source: str

    @property
    def symbol(self) -> str:
        """The C function, ``tvmd_c_<name>``."""
        return f"tvmd_c_{self.name}"


#: Every kernel, in the order of the extension's kernel table.
KERNELS: tuple[Kernel, ...] = (
    Kernel("conv2d_s8", ("CONV_2D",), CONV_PARAMS, "conv.c"),
    Kernel("depthwise_conv2d_s8", ("DEPTHWISE_CONV_2D",), CONV_PARAMS, "conv.c"),
    Kernel("fully_connected_s8", ("FULLY_CONNECTED",), FULLY_CONNECTED_PARAMS, "fully_connected.c"),
    Kernel("avg_pool2d_s8", ("AVERAGE_POOL_2D",), POOL_PARAMS, "pooling.c"),
    Kernel("max_pool2d_s8", ("MAX_POOL_2D",), POOL_PARAMS, "pooling.c"),
    Kernel("softmax_s8", ("SOFTMAX",), SOFTMAX_PARAMS, "softmax.c"),
    Kernel("add_s8", ("ADD",), ELEMENTWISE_PARAMS, "elementwise.c"),
    Kernel("mul_s8", ("MUL",), ELEMENTWISE_PARAMS, "elementwise.c"),
    Kernel("pad_s8", ("PAD",), PAD_PARAMS, "pad.c"),
    Kernel("concatenation_s8", ("CONCATENATION",), CONCATENATION_PARAMS, "concatenation.c"),
    Kernel("mean_s8", ("MEAN",), MEAN_PARAMS, "mean.c"),
    Kernel("quantize_f32_s8", ("QUANTIZE",), QUANTIZE_PARAMS, "quantize.c"),
    Kernel("requantize_s8", ("QUANTIZE",), QUANTIZE_PARAMS, "quantize.c"),
    Kernel("dequantize_s8_f32", ("DEQUANTIZE",), DEQUANTIZE_PARAMS, "quantize.c"),
    Kernel("logistic_s8", ("LOGISTIC",), ACTIVATION_PARAMS, "activations.c"),
    Kernel("tanh_s8", ("TANH",), ACTIVATION_PARAMS, "activations.c"),
    Kernel("reshape", ("RESHAPE", "SQUEEZE", "EXPAND_DIMS"), COPY_PARAMS, "reshape.c"),
    *(Kernel(*k) for k in SHAPE_KERNELS),
    # arithmetic and activations (issue 12; params in arith_layouts.py)
    Kernel("maximum_s8", ("MAXIMUM",), MINMAX_PARAMS, "minmax.c"),
    Kernel("minimum_s8", ("MINIMUM",), MINMAX_PARAMS, "minmax.c"),
    Kernel("squared_difference_s8", ("SQUARED_DIFFERENCE",), SQUARED_DIFFERENCE_PARAMS, "squared_difference.c"),
    Kernel("prelu_s8", ("PRELU",), PRELU_PARAMS, "prelu.c"),
    Kernel("relu_s8", ("RELU", "RELU_N1_TO_1"), RELU_PARAMS, "relu.c"),
    Kernel("relu6_s8", ("RELU6",), RELU6_PARAMS, "relu.c"),
    Kernel("leaky_relu_s8", ("LEAKY_RELU",), LEAKY_RELU_PARAMS, "relu.c"),
    Kernel("hard_swish_s8", ("HARD_SWISH",), HARD_SWISH_PARAMS, "relu.c"),
    Kernel("sum_s8", ("SUM",), MEAN_PARAMS, "reduce.c"),
    Kernel("reduce_max_s8", ("REDUCE_MAX",), REDUCE_MAX_PARAMS, "reduce.c"),
    Kernel("arg_max_s8", ("ARG_MAX",), ARG_MIN_MAX_PARAMS, "reduce.c"),
    Kernel("arg_min_s8", ("ARG_MIN",), ARG_MIN_MAX_PARAMS, "reduce.c"),
    Kernel("transpose_conv_s8", ("TRANSPOSE_CONV",), TRANSPOSE_CONV_PARAMS, "transpose_conv.c"),
    Kernel("batch_matmul_s8", ("BATCH_MATMUL",), BATCH_MATMUL_PARAMS, "batch_matmul.c"),
    Kernel("log_softmax_s8", ("LOG_SOFTMAX",), LOG_SOFTMAX_PARAMS, "log_softmax.c"),
    Kernel("lstm_s8", ("UNIDIRECTIONAL_SEQUENCE_LSTM",), LSTM_PARAMS, "lstm.c"),
    Kernel("lstm_s16", ("UNIDIRECTIONAL_SEQUENCE_LSTM",), LSTM_PARAMS, "lstm.c"),
    Kernel("svdf_s8_s16", ("SVDF",), SVDF_PARAMS, "svdf.c"),
    Kernel("svdf_s8_s8", ("SVDF",), SVDF_PARAMS, "svdf.c"),
)

# The int16x8 kernels and SUB (their module imports Kernel and the layouts above, so it is
# imported through this one).
from .kernel_table_int16 import KERNELS as INT16_KERNELS  # noqa: E402

KERNELS += INT16_KERNELS
#: The kernel keys of the int16x8 kernels and SUB (``"ADD:int16"``...).
INT16_OPERATORS: frozenset[str] = frozenset(key for k in INT16_KERNELS for key in k.op_types)

#: Kernel name -> kernel.
KERNEL_BY_NAME: dict[str, Kernel] = {k.name: k for k in KERNELS}

#: Every params struct, each once, in first-use order.
PARAMS_LAYOUTS: tuple[Layout, ...] = tuple(dict.fromkeys(k.layout for k in KERNELS))
