"""FULLY_CONNECTED on the woofles MAC array: its limits and its params struct."""

from __future__ import annotations

from typing import Any

from tvmdevice.ops import FullyConnectedData
from tvmdevice.params import ParamsStruct

from ..params import FC_PARAMS
from .limits import check_limit

__all__ = ["pack"]


def pack(data: FullyConnectedData, options: dict[str, Any]) -> tuple[str, ParamsStruct]:
    """The kernel name and its ``tvmd_woofles_fc_params_t``.

    :raises Refusal: more units or a deeper input than ``-max_channels``.
    """
    check_limit(max(data.out_ch, data.accum_depth), options, "max_channels", "channel count")
    return "tvmd_woofles_fully_connected_s8", ParamsStruct(FC_PARAMS, data)
