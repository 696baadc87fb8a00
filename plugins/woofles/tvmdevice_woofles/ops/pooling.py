"""AVERAGE_POOL_2D and MAX_POOL_2D on the woofles vector unit: its limits and its params struct."""

from __future__ import annotations

from typing import Any

from tvmdevice.errors import Refusal
from tvmdevice.ir import Operator
from tvmdevice.ops import PoolData
from tvmdevice.params import ParamsStruct

from ..params import POOL_PARAMS
from .limits import check_int16, check_limit

__all__ = ["pack"]


def pack(data: PoolData, options: dict[str, Any], op: Operator) -> tuple[str, ParamsStruct]:
    """The kernel name and its ``tvmd_woofles_pool_params_t``.

    :raises Refusal: a window or channel count beyond the NPU's limits, a window
        the kernel cannot fold (wholly inside the padding), or int16 tensors
        without the 16-bit datapath.
    """
    check_limit(max(data.filter_h, data.filter_w), options, "max_kernel", "pooling window")
    check_limit(data.channels, options, "max_channels", "channel count")
    # The kernel stops at a window with no tap inside the image; the last
    # window is the one that starts furthest from it.
    if (data.out_h - 1) * data.stride_h - data.pad_h >= data.in_h or \
            (data.out_w - 1) * data.stride_w - data.pad_w >= data.in_w:
        raise Refusal("a pooling window lies entirely in the padding")
    suffix = "s8"
    if data.variant == "int16":
        check_int16(options, "int16 tensors")
        suffix = "s16"
    kind = "avg" if data.average else "max"
    return f"tvmd_woofles_{kind}_pool2d_{suffix}", ParamsStruct(POOL_PARAMS, data)
