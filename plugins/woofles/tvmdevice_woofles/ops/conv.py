"""CONV_2D and DEPTHWISE_CONV_2D on the woofles MAC array: its limits and its params struct."""

from __future__ import annotations

from typing import Any

from tvmdevice.ir import Operator
from tvmdevice.ops import ConvData
from tvmdevice.params import ParamsStruct

from ..params import CONV16_PARAMS, CONV_PARAMS
from .limits import check_accumulator, check_int16, check_limit

__all__ = ["pack"]


def pack(data: ConvData, options: dict[str, Any], op: Operator) -> tuple[str, ParamsStruct]:
    """The kernel name and its ``tvmd_woofles_conv_params_t`` (int16x8: ``tvmd_woofles_conv16_params_t``).

    A PAD folded into the convolution (``tvmdevice.aot.fold``) arrives as its op data: the unpadded
    input, the PAD's borders added to ``pad_h``/``pad_w``; the window loader supplies every border tap.

    :raises Refusal: dilation, filter size, channel count or a window border (its own padding plus a
        folded PAD's, on any side) beyond the NPU's limits; int16
        activations without the 16-bit datapath, or an accumulation wider than its accumulators.
    """
    check_limit(max(data.dilation_h, data.dilation_w), options, "max_dilation", "dilation")
    check_limit(max(data.filter_h, data.filter_w), options, "max_kernel", "filter size")
    check_limit(max(data.in_ch, data.out_ch), options, "max_channels", "channel count")
    check_limit(max(data.borders), options, "max_pad", "window border")
    name = "depthwise_conv2d" if data.depthwise else "conv2d"
    if data.variant == "int16":
        check_int16(options, "int16 activations")
        check_accumulator(data.bias_bits, options)  # type: ignore[attr-defined]
        return f"tvmd_woofles_{name}_s16", ParamsStruct(CONV16_PARAMS, data)
    return f"tvmd_woofles_{name}_s8", ParamsStruct(CONV_PARAMS, data)
