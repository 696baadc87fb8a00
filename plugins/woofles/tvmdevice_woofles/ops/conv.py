"""CONV_2D and DEPTHWISE_CONV_2D on the woofles MAC array: its limits and its params struct."""

from __future__ import annotations

from typing import Any

from tvmdevice.ops import ConvData
from tvmdevice.params import ParamsStruct

from ..params import CONV_PARAMS
from .limits import check_limit

__all__ = ["pack"]


def pack(data: ConvData, options: dict[str, Any]) -> tuple[str, ParamsStruct]:
    """The kernel name and its ``tvmd_woofles_conv_params_t``.

    :raises Refusal: dilation, filter size or channel count beyond the NPU's limits.
    """
    check_limit(max(data.dilation_h, data.dilation_w), options, "max_dilation", "dilation")
    check_limit(max(data.filter_h, data.filter_w), options, "max_kernel", "filter size")
    check_limit(max(data.in_ch, data.out_ch), options, "max_channels", "channel count")
    kernel = "tvmd_woofles_depthwise_conv2d_s8" if data.depthwise else "tvmd_woofles_conv2d_s8"
    return kernel, ParamsStruct(CONV_PARAMS, data)
