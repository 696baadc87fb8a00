"""Builtin options of the shape and data-movement operators, decoded to the IR's option names.

Merged into the frontend's decoder table (:mod:`._schema`).  Every table is
optional: TFLite leaves it out when all its fields are at their defaults.
"""

from __future__ import annotations

from typing import Any, Callable

import tflite

__all__ = ["DECODERS", "DEFAULTS"]


def _squeeze(o: Any) -> dict[str, Any]:
    if o.SqueezeDimsIsNone() or o.SqueezeDimsLength() == 0:
        return {"squeeze_dims": ()}
    return {"squeeze_dims": tuple(int(d) for d in o.SqueezeDimsAsNumpy())}


def _strided_slice(o: Any) -> dict[str, Any]:
    return {"begin_mask": o.BeginMask(), "end_mask": o.EndMask(), "ellipsis_mask": o.EllipsisMask(),
            "new_axis_mask": o.NewAxisMask(), "shrink_axis_mask": o.ShrinkAxisMask(), "offset": bool(o.Offset())}


def _resize(o: Any) -> dict[str, Any]:
    return {"align_corners": bool(o.AlignCorners()), "half_pixel_centers": bool(o.HalfPixelCenters())}


_B = tflite.BuiltinOptions
#: op type -> (BuiltinOptions union tag, options class, decoder, required).
DECODERS: dict[str, tuple[int, type, Callable[[Any], dict[str, Any]], bool]] = {
    "STRIDED_SLICE": (_B.StridedSliceOptions, tflite.StridedSliceOptions, _strided_slice, False),
    "SPLIT": (_B.SplitOptions, tflite.SplitOptions, lambda o: {"num_splits": o.NumSplits()}, False),
    "SPLIT_V": (_B.SplitVOptions, tflite.SplitVOptions, lambda o: {"num_splits": o.NumSplits()}, False),
    "PACK": (_B.PackOptions, tflite.PackOptions, lambda o: {"values_count": o.ValuesCount(), "axis": o.Axis()},
             False),
    "UNPACK": (_B.UnpackOptions, tflite.UnpackOptions, lambda o: {"num": o.Num(), "axis": o.Axis()}, False),
    "SQUEEZE": (_B.SqueezeOptions, tflite.SqueezeOptions, _squeeze, False),
    "GATHER": (_B.GatherOptions, tflite.GatherOptions, lambda o: {"axis": o.Axis(), "batch_dims": o.BatchDims()},
               False),
    "RESIZE_BILINEAR": (_B.ResizeBilinearOptions, tflite.ResizeBilinearOptions, _resize, False),
    "RESIZE_NEAREST_NEIGHBOR": (_B.ResizeNearestNeighborOptions, tflite.ResizeNearestNeighborOptions, _resize,
                                False),
}

_NO_MASKS = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0,
             "offset": False}
#: Options when the table is absent (the schema's defaults).
DEFAULTS: dict[str, dict[str, Any]] = {
    "STRIDED_SLICE": _NO_MASKS, "SPLIT": {"num_splits": 0}, "SPLIT_V": {"num_splits": 0},
    "PACK": {"values_count": 0, "axis": 0}, "UNPACK": {"num": 0, "axis": 0}, "SQUEEZE": {"squeeze_dims": ()},
    "GATHER": {"axis": 0, "batch_dims": 0},
    "RESIZE_BILINEAR": {"align_corners": False, "half_pixel_centers": False},
    "RESIZE_NEAREST_NEIGHBOR": {"align_corners": False, "half_pixel_centers": False},
}
