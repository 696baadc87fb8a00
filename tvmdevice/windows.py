"""Sliding-window geometry as TensorFlow Lite Micro computes it at Prepare time.

Convolutions and pools share it: output size from the padding kind, and the
leading (top/left) padding.  Every device's prepare step uses these, so the
host reference, cmsis-nn and woofles agree on the same edge cases.
"""

from __future__ import annotations

__all__ = ["PADDINGS", "effective_size", "out_size", "leading_padding"]

#: The padding kinds TFLite models use.
PADDINGS = ("SAME", "VALID")


def effective_size(filt: int, dilation: int = 1) -> int:
    """Extent of a dilated filter: ``(filt - 1) * dilation + 1``."""
    return (filt - 1) * dilation + 1


def out_size(padding: str, image: int, filt: int, stride: int, dilation: int = 1) -> int:
    """TFLM's ``ComputeOutSize`` (TensorFlow's ``GetWindowedOutputSize``).

    :raises ValueError: for a padding kind other than SAME or VALID.
    """
    if padding == "SAME":
        return (image + stride - 1) // stride
    if padding == "VALID":
        return (image + stride - effective_size(filt, dilation)) // stride
    raise ValueError(f"padding {padding!r} is not one of {PADDINGS}")


def leading_padding(stride: int, dilation: int, image: int, filt: int, out: int) -> int:
    """TFLM's ``ComputePaddingWithOffset``: the top/left padding (the odd pixel goes bottom/right)."""
    total = (out - 1) * stride + effective_size(filt, dilation) - image
    return max(total, 0) // 2
