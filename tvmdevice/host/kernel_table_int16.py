"""The host's int16x8 kernels and SUB: their entries in :data:`~tvmdevice.host.kernel_table.KERNELS`.

Each kernel names the operator variants it runs by kernel key
(:func:`tvmdevice.ops.kernel_key`: ``"ADD:int16"``); the params structs are
the int8 kernels' wherever TFLM's op data has the same members, and new ones
(declared here) where the int16 kernel needs its own (lookup tables).

Light on purpose, like :mod:`tvmdevice.host.kernel_table`, which appends
:data:`KERNELS` to its own list (import them from there: this module needs its
layouts, so it is loaded through it).
"""

from __future__ import annotations

from ..layout import Field, Layout
from .kernel_table import (
    CONV_PARAMS,
    ELEMENTWISE_PARAMS,
    FULLY_CONNECTED_PARAMS,
    POOL_PARAMS,
    QUANTIZE_PARAMS,
    SOFTMAX_PARAMS,
    Kernel,
)

__all__ = ["KERNELS", "CONV_S16_PARAMS", "FULLY_CONNECTED_S16_PARAMS", "SOFTMAX_S16_PARAMS",
           "ACTIVATION_S16_PARAMS"]

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

#: The int16 variants and SUB, in kernel table order (after the int8 kernels).
KERNELS: tuple[Kernel, ...] = (
    Kernel("quantize_f32_s16", ("QUANTIZE:float32->int16",), QUANTIZE_PARAMS, "quantize_s16.c"),
    Kernel("requantize_s8_s16", ("QUANTIZE:int8->int16",), QUANTIZE_PARAMS, "quantize_s16.c"),
    Kernel("requantize_s16_s8", ("QUANTIZE:int16->int8",), QUANTIZE_PARAMS, "quantize_s16.c"),
    Kernel("requantize_s16_s16", ("QUANTIZE:int16->int16",), QUANTIZE_PARAMS, "quantize_s16.c"),
    Kernel("sub_s8", ("SUB",), ELEMENTWISE_PARAMS, "elementwise_s16.c"),
    Kernel("add_s16", ("ADD:int16",), ELEMENTWISE_PARAMS, "elementwise_s16.c"),
    Kernel("sub_s16", ("SUB:int16",), ELEMENTWISE_PARAMS, "elementwise_s16.c"),
    Kernel("mul_s16", ("MUL:int16",), ELEMENTWISE_PARAMS, "elementwise_s16.c"),
    Kernel("conv2d_s16", ("CONV_2D:int16",), CONV_S16_PARAMS, "conv_s16.c"),
    Kernel("depthwise_conv2d_s16", ("DEPTHWISE_CONV_2D:int16",), CONV_S16_PARAMS, "conv_s16.c"),
    Kernel("fully_connected_s16", ("FULLY_CONNECTED:int16",), FULLY_CONNECTED_S16_PARAMS, "fully_connected_s16.c"),
    Kernel("avg_pool2d_s16", ("AVERAGE_POOL_2D:int16",), POOL_PARAMS, "pooling_s16.c"),
    Kernel("max_pool2d_s16", ("MAX_POOL_2D:int16",), POOL_PARAMS, "pooling_s16.c"),
    Kernel("softmax_s8_s16", ("SOFTMAX:int8->int16",), SOFTMAX_PARAMS, "softmax_s16.c"),
    Kernel("softmax_s16", ("SOFTMAX:int16",), SOFTMAX_S16_PARAMS, "softmax_s16.c"),
    Kernel("logistic_s16", ("LOGISTIC:int16",), ACTIVATION_S16_PARAMS, "activations_s16.c"),
    Kernel("tanh_s16", ("TANH:int16",), ACTIVATION_S16_PARAMS, "activations_s16.c"),
)
