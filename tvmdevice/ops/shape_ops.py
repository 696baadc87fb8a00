"""The shape and data-movement operators' entries of :data:`tvmdevice.ops.OPERATORS`."""

from __future__ import annotations

from tvmdevice.ops import gather, pad, resize, split, squeeze, strided
from tvmdevice.ops._base import OpDef

__all__ = ["OPERATORS"]

#: op type -> definition, merged into :data:`tvmdevice.ops.OPERATORS`.
OPERATORS: dict[str, OpDef] = {
    "TRANSPOSE": OpDef(strided.TRANSPOSE_SIGNATURE, strided.validate, strided.analyze),
    "SLICE": OpDef(strided.SLICE_SIGNATURE, strided.validate, strided.analyze),
    "STRIDED_SLICE": OpDef(strided.STRIDED_SLICE_SIGNATURE, strided.validate, strided.analyze),
    "BROADCAST_TO": OpDef(strided.BROADCAST_TO_SIGNATURE, strided.validate, strided.analyze),
    "SPLIT": OpDef(split.SPLIT_SIGNATURE, split.validate, split.analyze),
    "SPLIT_V": OpDef(split.SPLIT_V_SIGNATURE, split.validate, split.analyze),
    "UNPACK": OpDef(split.UNPACK_SIGNATURE, split.validate, split.analyze),
    "PACK": OpDef(split.PACK_SIGNATURE, split.validate, split.analyze),
    "SQUEEZE": OpDef(squeeze.SQUEEZE_SIGNATURE, squeeze.validate, squeeze.analyze),
    "EXPAND_DIMS": OpDef(squeeze.EXPAND_DIMS_SIGNATURE, squeeze.validate, squeeze.analyze),
    "GATHER": OpDef(gather.SIGNATURE, gather.validate, gather.analyze),
    "PADV2": OpDef(pad.PADV2_SIGNATURE, pad.validate, pad.analyze),
    "RESIZE_NEAREST_NEIGHBOR": OpDef(resize.NEAREST_SIGNATURE, resize.validate, resize.analyze),
    "RESIZE_BILINEAR": OpDef(resize.BILINEAR_SIGNATURE, resize.validate, resize.analyze),
}
