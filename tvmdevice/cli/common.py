"""What several commands share: the model argument, input options, compiling, printing outputs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from ..errors import InvalidArgumentError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..aot.compiler import CompiledModule
    from .inputs import Samples, TensorSpec

__all__ = ["add_input_args", "add_output_args", "check_model_path", "compile_model", "is_export",
           "save_outputs", "output_rows", "print_json"]

#: Suffixes a model file may have (the frontends' own list is checked again when the file is read).
MODEL_SUFFIXES = (".tflite",)


def add_input_args(p: argparse.ArgumentParser, *, many: bool = True) -> None:
    """``-i``, ``--quantize``, ``--reshape`` and ``--seed``."""
    if many:
        p.add_argument("--input", "-i", action="append", default=[], metavar="X.npy",
                       help="input .npy per model input, each exactly the input's shape; with a leading batch "
                            "axis (N, ...) it is N samples; a directory of .npy files (one sample each, sorted by "
                            "file name) or a .npz (array 'x') runs many (default: seeded random inputs)")
    p.add_argument("--quantize", action="store_true",
                   help="quantize float inputs with the model input's scale and zero point "
                        "(round half away from zero, clamped, as TFLite's QUANTIZE)")
    p.add_argument("--reshape", action="store_true",
                   help="accept an input array of the right size but another shape and reinterpret it in C "
                        "order (default: shapes must match exactly)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default: %(default)s)")


def add_output_args(p: argparse.ArgumentParser) -> None:
    """``--dequantize`` and ``--top-k``."""
    p.add_argument("--dequantize", action="store_true",
                   help="print and save outputs as float32: scale * (q - zero_point) with the output's quantization")
    from .classes import positive_int

    p.add_argument("--top-k", type=positive_int, default=None, metavar="N",
                   help="for a classifier: print the N best classes and scores of each sample (N from 1 to the "
                        "number of classes, output 0's values)")


def is_export(path: str | None) -> bool:
    """Whether ``path`` is a directory (an export made by ``tvmdevice export``)."""
    return bool(path) and Path(str(path)).is_dir()


def check_model_path(path: str) -> Path:
    """``path`` as a model file, or one clear error: missing, a directory, or not a model."""
    p = Path(path)
    if not p.exists():
        raise InvalidArgumentError(f"model file {path!r} does not exist")
    if p.is_dir():
        raise InvalidArgumentError(f"{path!r} is a directory, not a model file and not an export (it has no "
                                   f"metadata.json); name a .tflite file, or a directory written by "
                                   f"`tvmdevice export`")
    if p.suffix.lower() not in MODEL_SUFFIXES:
        raise InvalidArgumentError(f"{path!r} is not a model file: tvmdevice reads int8-quantized TFLite "
                                   f"flatbuffers ({', '.join(MODEL_SUFFIXES)})")
    return p


def compile_model(path: str | None, target: str | None, *, strict: bool = False, registry: Any = None,
                  ) -> tuple["CompiledModule", str]:
    """The model at ``path`` (the built-in demo when None) compiled for ``target``, and its name."""
    from .. import compile as tvm_compile
    from .. import get_registry

    if path:
        model: Any = check_model_path(path)
        name = model.stem
    else:
        from ..aot.builder import demo_model

        model, name = demo_model(), "demo"
    module = tvm_compile(model, target, strict=strict, registry=registry or get_registry(), name=name)
    return module, name


def random_samples(specs: Sequence["TensorSpec"], seed: int) -> "Samples":
    """One sample of seeded random values, each input's dtype and shape."""
    import numpy as np

    from .inputs import Samples

    rng = np.random.default_rng(seed)
    sample = []
    for s in specs:
        if s.dtype.kind == "f":
            sample.append(rng.standard_normal(s.shape).astype(s.dtype))
        else:
            info = np.iinfo(s.dtype)
            sample.append(rng.integers(info.min, info.max + 1, size=s.shape, dtype=s.dtype))
    return Samples([sample], [f"random(seed={seed})"])


def samples_from_args(args: argparse.Namespace, specs: Sequence["TensorSpec"]) -> "Samples":
    """The samples ``-i`` names, or one random sample."""
    from .inputs import load_samples

    if not args.input:
        return random_samples(specs, args.seed)
    return load_samples(args.input, specs, quantize_floats=args.quantize, reshape=args.reshape)


def output_rows(outputs: Sequence["np.ndarray"], specs: Sequence["TensorSpec"], *, dequantize: bool,
                ) -> list["np.ndarray"]:
    """One sample's outputs, dequantized when asked."""
    from .inputs import dequantize as deq

    return [deq(o, s) if dequantize else o for o, s in zip(outputs, specs)]


def save_outputs(directory: str, outputs: list[list["np.ndarray"]], names: Sequence[str]) -> None:
    """``output_<k>.npy`` per model output in ``directory`` and ``samples.txt``.

    With several samples each ``output_<k>.npy`` is stacked on a leading axis, row ``i`` being sample
    ``i``, whose name is line ``i + 1`` of ``samples.txt``.
    """
    import numpy as np

    out_dir = Path(directory)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for k in range(len(outputs[0])):
            stacked = np.stack([o[k] for o in outputs]) if len(outputs) > 1 else outputs[0][k]
            np.save(out_dir / f"output_{k}.npy", stacked)
        (out_dir / "samples.txt").write_text("".join(f"{n}\n" for n in names))
    except OSError as exc:
        raise InvalidArgumentError(f"cannot write outputs into {directory!r}: {exc}") from None


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout)
    sys.stdout.write("\n")
