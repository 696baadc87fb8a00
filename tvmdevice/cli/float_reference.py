"""The float model as a reference (``eval --reference float:MODEL_FLOAT.tflite``).

LiteRT (``ai-edge-litert``) runs the float model on each sample's inputs dequantized with the int8
model's input quantization (a float input is given as it is); the int8 model's outputs, dequantized,
are compared with the float model's per output: SNR, cosine similarity and top-1 agreement
(:mod:`.agreement`).  The float model must have as many inputs and outputs as the int8 model, of the
same shapes, all float32.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import InvalidArgumentError, NotSupportedError

__all__ = ["FloatReference", "read_float_model"]

def _require_litert() -> None:
    if importlib.util.find_spec("ai_edge_litert") is None:
        raise NotSupportedError("--reference float:... runs the float model with LiteRT, which is not installed: "
                                "pip install ai-edge-litert (or pip install 'tvmdevice[bench]')")


def _interpreter(model: bytes) -> Any:
    from ai_edge_litert.interpreter import Interpreter

    from .references import native_info_dropped

    with native_info_dropped():
        it = Interpreter(model_content=bytes(model), num_threads=1)
        it.allocate_tensors()
    return it


def read_float_model(path: str, in_specs: Sequence[Any], out_specs: Sequence[Any]) -> bytes:
    """The float model's bytes, checked against the int8 model's inputs and outputs.

    :raises InvalidArgumentError: the file is missing or not loadable, or its inputs or outputs differ in
        count, shape or are not float32 (the message says which).
    :raises NotSupportedError: LiteRT is not installed.
    """
    _require_litert()
    p = Path(path)
    if not p.is_file():
        raise InvalidArgumentError(f"float model {path!r} does not exist" if not p.exists()
                                   else f"float model {path!r} is not a file")
    model = p.read_bytes()
    try:
        it = _interpreter(model)
    except Exception as exc:  # noqa: BLE001 - LiteRT raises ValueError/RuntimeError with its reason
        raise InvalidArgumentError(f"float model {path!r}: LiteRT cannot load it: {' '.join(str(exc).split())}"
                                   ) from None
    for what, details, specs in (("inputs", it.get_input_details(), in_specs),
                                 ("outputs", it.get_output_details(), out_specs)):
        if len(details) != len(specs):
            raise InvalidArgumentError(f"float model {path!r} has {len(details)} {what}, the int8 model "
                                       f"{len(specs)}: they must match")
        for k, (d, s) in enumerate(zip(details, specs)):
            shape = tuple(int(v) for v in d["shape"])
            if shape != tuple(s.shape):
                raise InvalidArgumentError(f"float model {path!r}: {what[:-1]} {k} has shape {shape}, the int8 "
                                           f"model's {tuple(s.shape)}: they must match")
            if np.dtype(d["dtype"]) != np.float32:
                raise InvalidArgumentError(f"float model {path!r}: {what[:-1]} {k} is {np.dtype(d['dtype']).name}, "
                                           f"not float32: name the float model the int8 one was converted from")
    return model


class FloatReference:
    """The float model loaded in LiteRT, run on the int8 model's samples."""

    def __init__(self, model: bytes, in_specs: Sequence[Any], out_specs: Sequence[Any]) -> None:
        _require_litert()
        self._it = _interpreter(model)
        self._in_specs, self._out_specs = list(in_specs), list(out_specs)

    def run(self, sample: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The float model's outputs on ``sample`` (the int8 model's inputs, dequantized)."""
        from .inputs import dequantize

        it = self._it
        for d, x, spec in zip(it.get_input_details(), sample, self._in_specs):
            it.set_tensor(d["index"], np.asarray(dequantize(np.asarray(x), spec), dtype=np.float32))
        it.invoke()
        return [np.array(it.get_tensor(d["index"])) for d in it.get_output_details()]

    def compare(self, sample: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> list[dict[str, Any]]:
        """Per output, :func:`.agreement.float_metrics` of our dequantized outputs against the float model's."""
        from .agreement import float_metrics
        from .inputs import dequantize

        theirs = self.run(sample)
        return [float_metrics(dequantize(np.asarray(o), s), t) for o, s, t in zip(outputs, self._out_specs, theirs)]
