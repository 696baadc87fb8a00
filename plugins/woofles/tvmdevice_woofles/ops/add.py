"""ADD on the woofles vector unit: its address generator's rank and its params struct."""

from __future__ import annotations

import math
from typing import Any

from tvmdevice.errors import Refusal
from tvmdevice.ops import ElementwiseData
from tvmdevice.params import ParamsStruct

from ..params import ADD_PARAMS, ADD_RANK

__all__ = ["pack"]


def pack(data: ElementwiseData, options: dict[str, Any]) -> tuple[str, ParamsStruct]:
    """The kernel name and its ``tvmd_woofles_add_params_t``.

    The address generator walks the output over ``ADD_RANK`` dimensions with
    one element-stride set per input (stride 0 repeats a broadcast dimension).

    :raises Refusal: an output of higher rank.
    """
    rank = len(data.out_shape)
    if rank > ADD_RANK:
        raise Refusal(f"rank {rank} exceeds the address generator's {ADD_RANK} dimensions")
    out_shape, in1_strides, in2_strides = data.broadcast_strides(rank=ADD_RANK)
    params = ParamsStruct(ADD_PARAMS, data, out_shape=out_shape, in1_strides=in1_strides, in2_strides=in2_strides,
                          in1_size=math.prod(data.in1_shape), in2_size=math.prod(data.in2_shape))
    return "tvmd_woofles_add_s8", params
