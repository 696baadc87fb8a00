"""Convolutions, pooling and fully connected layers (int8 and int16): the host's window limits.

The op data (:class:`tvmdevice.ops.ConvData`, :class:`~tvmdevice.ops.PoolData`,
:class:`~tvmdevice.ops.FullyConnectedData`) fills the params structs; the
host adds what it refuses beyond TFLM's own checks:

* TFLM's AveragePool fails at Eval on a window that lies entirely in the
  padding; the host refuses such an operator when it is prepared instead.
* The C kernels compute window coordinates (``oy * stride - pad + ky *
  dilation``) in int32: geometry past that range, which only a hostile file
  has, is refused before it can reach C.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tvmdevice.errors import Refusal

from ._common import KernelPlan

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator
    from tvmdevice.ops import ConvData, FullyConnectedData, PoolData

__all__ = ["conv", "pool", "fully_connected", "check_pool_windows", "check_window_coordinates"]

_INT32_MAX = 2**31 - 1


def _width(d: "ConvData | PoolData") -> str:
    return "s16" if d.variant == "int16" else "s8"


def conv(graph: "Graph", op: "Operator", d: "ConvData") -> KernelPlan:
    """CONV_2D and DEPTHWISE_CONV_2D: the coordinate bound; the kernel the op data's ``depthwise`` says."""
    check_window_coordinates(d)
    return KernelPlan(kernel=f"{'depthwise_conv2d' if d.depthwise else 'conv2d'}_{_width(d)}")


def pool(graph: "Graph", op: "Operator", d: "PoolData") -> KernelPlan:
    """AVERAGE_POOL_2D and MAX_POOL_2D: the coordinate bound and no window in the padding alone; the
    kernel the op data's ``average`` says."""
    check_window_coordinates(d)
    check_pool_windows(d)
    return KernelPlan(kernel=f"{'avg' if d.average else 'max'}_pool2d_{_width(d)}")


def fully_connected(graph: "Graph", op: "Operator", d: "FullyConnectedData") -> KernelPlan:
    """Per-channel weights: a multiplier and shift per channel; per-tensor: one of each, not
    ``out_ch`` copies (flash in an export)."""
    if d.per_channel:
        return KernelPlan({"quant_stride": 1})
    return KernelPlan({"quant_stride": 0, "multiplier": d.multiplier[:1], "shift": d.shift[:1]})


def _empty_window(n_out: int, stride: int, pad: int, filt: int, size: int) -> bool:
    # Window k covers [k * stride - pad, k * stride - pad + filt) along one axis.
    return any(min(filt, size - (k * stride - pad)) - max(0, pad - k * stride) <= 0 for k in range(n_out))


def check_pool_windows(data: "PoolData") -> None:
    """Refuse an average pool with a window outside the image (no-op for max pools).

    :raises Refusal: naming the operator.
    """
    if data.average and (_empty_window(data.out_h, data.stride_h, data.pad_h, data.filter_h, data.in_h)
                         or _empty_window(data.out_w, data.stride_w, data.pad_w, data.filter_w, data.in_w)):
        raise Refusal("a pooling window lies entirely in the padding", op=data, device="c")


def check_window_coordinates(data: "ConvData | PoolData") -> None:
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
