"""ADD on the woofles vector unit: its address generator's rank and its params struct."""

from __future__ import annotations

import math
from typing import Any

from tvmdevice.errors import Refusal
from tvmdevice.ir import Operator
from tvmdevice.ops import ElementwiseData
from tvmdevice.params import ParamsStruct

from ..params import ADD_PARAMS, ADD_RANK
from .limits import check_int16

__all__ = ["pack"]


def pack(data: ElementwiseData, options: dict[str, Any], op: Operator) -> tuple[str, ParamsStruct]:
    """The kernel name and its ``tvmd_woofles_add_params_t``.

    The address generator walks the output over ``ADD_RANK`` dimensions with
    one element-stride set per input (stride 0 repeats a broadcast dimension);
    inputs of one shape run as one flat row, whatever their rank.

    :raises Refusal: a broadcast of higher rank; int16 tensors without the 16-bit datapath.
    """
    rank = len(data.out_shape)
    if data.in1_shape == data.in2_shape:
        flat = (1,) * (ADD_RANK - 1)
        out_shape, in1_strides = flat + (data.size,), (0,) * (ADD_RANK - 1) + (1,)
        in2_strides = in1_strides
    else:
        if rank > ADD_RANK:
            raise Refusal(f"broadcast rank {rank} exceeds the address generator's {ADD_RANK} dimensions")
        out_shape, in1_strides, in2_strides = data.broadcast_strides(rank=ADD_RANK)
    suffix = "s8"
    if data.variant == "int16":
        check_int16(options, "int16 tensors")
        suffix = "s16"
    params = ParamsStruct(ADD_PARAMS, data, out_shape=out_shape, in1_strides=in1_strides, in2_strides=in2_strides,
                          in1_size=math.prod(data.in1_shape), in2_size=math.prod(data.in2_shape))
    return f"tvmd_woofles_add_{suffix}", params
