"""MAXIMUM and MINIMUM on the woofles vector unit: the ADD address generator's rank, no rescale."""

from __future__ import annotations

import math
from typing import Any

from tvmdevice.errors import Refusal
from tvmdevice.ir import Operator
from tvmdevice.ops.minmax import MinMaxData
from tvmdevice.params import ParamsStruct

from ..params import MINMAX_PARAMS, MINMAX_RANK

__all__ = ["pack"]


def pack(data: MinMaxData, options: dict[str, Any], op: Operator) -> tuple[str, ParamsStruct]:
    """The kernel name and its ``tvmd_woofles_minmax_params_t``.

    Equal shapes run as one flat row, whatever their rank; broadcasting walks
    the compare unit's address generator (``MINMAX_RANK`` dimensions).

    :raises Refusal: a broadcast of higher rank.
    """
    if data.broadcasts and len(data.out_shape) > MINMAX_RANK:
        raise Refusal(f"broadcast rank {len(data.out_shape)} exceeds the address generator's {MINMAX_RANK} dimensions")
    out_shape, in1_strides, in2_strides = data.broadcast_strides(rank=MINMAX_RANK)
    params = ParamsStruct(MINMAX_PARAMS, data, out_shape=out_shape, in1_strides=in1_strides, in2_strides=in2_strides,
                          in1_size=math.prod(data.in1_shape), in2_size=math.prod(data.in2_shape))
    return ("tvmd_woofles_maximum_s8" if data.maximum else "tvmd_woofles_minimum_s8"), params
