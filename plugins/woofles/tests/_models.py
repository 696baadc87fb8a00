"""One-operator models for each kernel key the woofles NPU declares, shaped inside its limits."""

from __future__ import annotations

from typing import Any

from tvmdevice.aot.builder import single_op_model

#: Builder parameters of an int16x8 variant: int16 activations (zero point 0), a small scale.
INT16 = {"input_dtype": "int16", "input_scale": 0.0005}
#: The window loader pads height and width only: a PAD the NPU accepts.
SPATIAL_PADDINGS = [[0, 0], [1, 2], [2, 1], [0, 0]]


def declared_model(key: str, **params: Any) -> bytes:
    """A one-operator model whose operator has kernel key ``key`` (``"ADD"``, ``"ADD:int16"``...)."""
    op_type, _, variant = key.partition(":")
    base: dict[str, Any] = dict(INT16) if variant == "int16" else {}
    if op_type in ("PAD", "PADV2"):
        base["paddings"] = SPATIAL_PADDINGS
    return single_op_model(op_type, **{**base, **params})
