"""What the host device refuses beyond the operator layer's op data.

TFLM's AveragePool fails at Eval on a window that lies entirely in the
padding; the host refuses such an operator when it is prepared instead, for
its C kernel and for the numpy reference alike.
"""

from __future__ import annotations

from tvmdevice.errors import Refusal
from tvmdevice.ops import PoolData

__all__ = ["check_pool_windows"]


def _empty_window(n_out: int, stride: int, pad: int, filt: int, size: int) -> bool:
    # Window k covers [k * stride - pad, k * stride - pad + filt) along one axis.
    return any(min(filt, size - (k * stride - pad)) - max(0, pad - k * stride) <= 0 for k in range(n_out))


def check_pool_windows(data: PoolData) -> None:
    """Refuse an average pool with a window outside the image (no-op for max pools).

    :raises Refusal: naming the operator.
    """
    if data.average and (_empty_window(data.out_h, data.stride_h, data.pad_h, data.filter_h, data.in_h)
                         or _empty_window(data.out_w, data.stride_w, data.pad_w, data.filter_w, data.in_w)):
        raise Refusal("a pooling window lies entirely in the padding", op=data, device="c")
