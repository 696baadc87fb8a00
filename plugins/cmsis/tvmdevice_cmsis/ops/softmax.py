"""SOFTMAX int8 -> int8: the params struct (no packing).

The core's :class:`tvmdevice.ops.softmax.SoftmaxData` (TFLM's
CalculateSoftmaxParams, with its row-length limit) fills it alone: input
multiplier, left shift and ``diff_min``.
"""

from __future__ import annotations

from tvmdevice.layout import Field, Layout

from . import _common as c

__all__ = ["PARAMS"]

PARAMS = Layout("tvmd_cmsis_softmax_params_t", (
    Field("kind", "uint32_t", doc="TVMD_CMSIS_KIND_SOFTMAX"),
    *c.int32_fields("rows", "depth", "input_multiplier", "input_left_shift", "diff_min"),
), doc="SOFTMAX int8 -> int8 along the last axis (TFLM's gemmlowp path).")
