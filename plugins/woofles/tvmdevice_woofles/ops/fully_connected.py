"""FULLY_CONNECTED on the woofles MAC array: its limits and its params struct."""

from __future__ import annotations

from typing import Any

from tvmdevice.ir import Operator
from tvmdevice.ops import FullyConnectedData
from tvmdevice.params import ParamsStruct

from ..params import FC16_PARAMS, FC_PARAMS
from .limits import check_accumulator, check_int16, check_limit

__all__ = ["pack"]


def pack(data: FullyConnectedData, options: dict[str, Any], op: Operator) -> tuple[str, ParamsStruct]:
    """The kernel name and its ``tvmd_woofles_fc_params_t`` (int16x8: ``tvmd_woofles_fc16_params_t``).

    :raises Refusal: more units or a deeper input than ``-max_channels``; int16 activations
        without the 16-bit datapath, or an accumulation wider than its accumulators.
    """
    check_limit(max(data.out_ch, data.accum_depth), options, "max_channels", "channel count")
    if data.variant == "int16":
        check_int16(options, "int16 activations")
        check_accumulator(data.bias_bits, options)  # type: ignore[attr-defined]
        return "tvmd_woofles_fully_connected_s16", ParamsStruct(FC16_PARAMS, data)
    return "tvmd_woofles_fully_connected_s8", ParamsStruct(FC_PARAMS, data)
