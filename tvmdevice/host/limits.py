"""What the host device refuses beyond the operator layer's op data.

* TFLM's AveragePool fails at Eval on a window that lies entirely in the
  padding; the host refuses such an operator when it is prepared instead.
* The C kernels compute window coordinates (``oy * stride - pad + ky *
  dilation``) in int32: geometry past that range, which only a hostile file
  has, is refused before it can reach C.
"""

from __future__ import annotations

from tvmdevice.errors import Refusal
from tvmdevice.ops import ConvData, PoolData

__all__ = ["check_pool_windows", "check_window_coordinates"]

_INT32_MAX = 2**31 - 1


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


def check_window_coordinates(data: ConvData | PoolData) -> None:
    """Refuse a convolution or pooling whose window coordinates leave the int32 range.

    :raises Refusal: naming the operator.
    """
    dilation_h, dilation_w = getattr(data, "dilation_h", 1), getattr(data, "dilation_w", 1)
    for out, stride, pad, filt, dilation, size in (
            (data.out_h, data.stride_h, data.pad_h, data.filter_h, dilation_h, data.in_h),
            (data.out_w, data.stride_w, data.pad_w, data.filter_w, dilation_w, data.in_w)):
        reach = max(out, 1) * stride + pad + filt * dilation + size
        if reach > _INT32_MAX:
            raise Refusal(f"window coordinates up to {reach} exceed the C kernel's int32 range "
                          f"(stride {stride}, dilation {dilation}, filter {filt}, padding {pad})", op=data, device="c")
