"""Model frontends: files in, :class:`tvmdevice.ir.Graph` out.

Only TFLite flatbuffers (int8, single subgraph) are supported today;
:func:`load_model` dispatches on the file suffix so more formats can join.
"""

from __future__ import annotations

from pathlib import Path

from tvmdevice.aot.frontend.tflite import load_tflite
from tvmdevice.errors import ModelFormatError, UnsupportedOperatorError
from tvmdevice.ir import Graph

__all__ = ["load_model", "load_tflite", "ModelFormatError", "UnsupportedOperatorError"]

_LOADERS = {".tflite": load_tflite}


def load_model(path: str | Path, name: str | None = None, *, max_tensor_bytes: int | None = None) -> Graph:
    """Import the model at ``path``, choosing the frontend by its suffix.

    :param max_tensor_bytes: the most bytes the model's tensors may declare in
        total (see :func:`tvmdevice.aot.frontend.tflite.tensor_bytes_limit`).

    :raises UnsupportedOperatorError: for a suffix no frontend handles.
    :raises ModelFormatError: when the file cannot be read or parsed.
    """
    path = Path(path)
    loader = _LOADERS.get(path.suffix.lower())
    if loader is None:
        known = ", ".join(sorted(_LOADERS))
        raise UnsupportedOperatorError(
            f"cannot import {str(path)!r}: unknown model format {path.suffix or '(no suffix)'!r}; "
            f"supported: {known}")
    return loader(path, name=name, max_tensor_bytes=max_tensor_bytes)
