"""TRANSPOSE_CONV on the woofles MAC array: its declared limits and its params struct."""

from __future__ import annotations

from typing import Any

from tvmdevice.ir import Operator
from tvmdevice.ops.transpose_conv import TransposeConvData
from tvmdevice.params import ParamsStruct

from ..params import TRANSPOSE_CONV_PARAMS
from .limits import check_limit

__all__ = ["pack"]


def pack(data: TransposeConvData, options: dict[str, Any], op: Operator) -> tuple[str, ParamsStruct]:
    """The kernel name and its ``tvmd_woofles_transpose_conv_params_t``.

    :raises Refusal: filter size or channel count beyond ``-max_kernel`` / ``-max_channels``.
    """
    check_limit(max(data.filter_h, data.filter_w), options, "max_kernel", "filter size")
    check_limit(max(data.in_ch, data.out_ch), options, "max_channels", "channel count")
    return "tvmd_woofles_transpose_conv_s8", ParamsStruct(TRANSPOSE_CONV_PARAMS, data)
