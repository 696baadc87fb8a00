"""Input files for the command line: safe reading, exact shapes, float quantization.

The one place the CLI turns what the user names (``-i x.npy``, a directory,
a ``.npz`` dataset) into per-sample input lists, so every command refuses a
bad file the same way: one line naming the file and what to do.

Samples come in a documented order, and each has a name that follows its
outputs into reports and ``-o`` directories:

* one ``.npy`` per model input whose shape is exactly the input's: one sample,
  named after the first file;
* the same with a leading batch axis, ``(N, *shape)``: ``N`` samples, named
  ``x.npy[0]`` ... ``x.npy[N-1]``, in row order;
* a directory of ``.npy`` files (a one-input model): one sample per file, in
  the order of the sorted file names (code-point order, as ``sorted()``), each
  file exactly the input's shape or with a batch axis of one;
* a ``.npz`` archive (datasets): the array ``x`` (or the only array that is
  not ``y``/``labels``), stacked on a leading axis, with labels in ``y`` or
  ``labels``.

Shapes are exact: a ``(1, 10, 49, 1)`` array for a ``(1, 49, 10, 1)`` input
has the right size and the wrong meaning, so it is refused unless
``--reshape`` says to reinterpret arrays of the right size.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import InvalidArgumentError

__all__ = ["TensorSpec", "Samples", "read_npy", "load_samples", "load_dataset", "quantize", "dequantize",
           "top_k", "graph_specs", "export_specs", "read_labels", "LABEL_KEYS"]

#: Keys of a ``.npz`` dataset that hold labels rather than inputs.
LABEL_KEYS = ("y", "labels")


@dataclass(frozen=True)
class TensorSpec:
    """What a model input or output is: shape, dtype and (int8) quantization."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    scale: float | None = None
    zero_point: int | None = None

    def describe(self) -> str:
        q = f", scale {self.scale:.6g}, zero point {self.zero_point}" if self.scale is not None else ""
        return f"{self.dtype.name} {self.shape}{q}"


@dataclass
class Samples:
    """Per-sample input lists and one name per sample, in the documented order."""

    inputs: list[list[np.ndarray]]
    names: list[str]
    labels: np.ndarray | None = field(default=None)

    def __len__(self) -> int:
        return len(self.inputs)


def graph_specs(graph: Any, indices: Sequence[int]) -> list[TensorSpec]:
    """:class:`TensorSpec` of the graph tensors ``indices`` (``graph.inputs`` or ``graph.outputs``)."""
    out = []
    for i in indices:
        t = graph.tensors[i]
        scale = zp = None
        if t.quant is not None and t.quant.scale.size == 1:
            scale, zp = float(t.quant.scale[0]), int(t.quant.zero_point[0])
        out.append(TensorSpec(t.name, tuple(t.shape), np.dtype(t.dtype), scale, zp))
    return out


def export_specs(entries: Sequence[dict[str, Any]]) -> list[TensorSpec]:
    """:class:`TensorSpec` of an export's ``metadata.json`` inputs or outputs."""
    return [TensorSpec(e["name"], tuple(e["shape"]), np.dtype(e["dtype"]), e.get("scale"), e.get("zero_point"))
            for e in entries]


def _existing_file(path: str | Path, what: str, suffixes: tuple[str, ...]) -> Path:
    p = Path(path)
    if not p.exists():
        raise InvalidArgumentError(f"{what} {str(p)!r} does not exist")
    if p.is_dir():
        raise InvalidArgumentError(f"{what} {str(p)!r} is a directory; name a {' or '.join(suffixes)} file")
    if p.suffix.lower() not in suffixes:
        raise InvalidArgumentError(f"{what} {str(p)!r} is not a {' or '.join(suffixes)} file "
                                   f"(save arrays with numpy.save)")
    return p


def read_npy(path: str | Path, what: str = "input") -> np.ndarray:
    """The array in a ``.npy`` file; any problem is one :class:`InvalidArgumentError` naming the file.

    Pickled object arrays are refused: loading them would run code from the file.
    """
    p = _existing_file(path, what, (".npy",))
    try:
        with open(p, "rb") as fh:
            magic = fh.read(6)
    except OSError as exc:
        raise InvalidArgumentError(f"cannot read {what} {str(p)!r}: {exc.strerror or exc}") from None
    if magic != b"\x93NUMPY":
        raise InvalidArgumentError(f"{what} {str(p)!r} is not a valid .npy file (no NumPy header); save arrays "
                                   f"with numpy.save")
    try:
        return np.load(p, allow_pickle=False)
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise InvalidArgumentError(f"{what} {str(p)!r} holds an object (pickled) array; save a numeric "
                                       f"array with numpy.save") from None
        raise InvalidArgumentError(f"{what} {str(p)!r} is not a valid .npy file: {exc}") from None
    except (OSError, EOFError) as exc:
        raise InvalidArgumentError(f"cannot read {what} {str(p)!r}: {exc}") from None


def quantize(x: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """Float ``x`` quantized as TFLite's QUANTIZE does: ``round(x / scale) + zero_point``, clamped.

    Rounding is half away from zero (TFLite's ``TfLiteRound``), in float32.
    """
    if spec.scale is None or spec.zero_point is None:
        raise InvalidArgumentError(f"input {spec.name!r} has no per-tensor quantization; --quantize cannot "
                                   f"quantize it")
    info = np.iinfo(spec.dtype)
    scaled = np.asarray(x, np.float32) / np.float32(spec.scale)
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))
    q = rounded.astype(np.int64) + spec.zero_point
    return np.clip(q, info.min, info.max).astype(spec.dtype)


def dequantize(q: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """``scale * (q - zero_point)`` as float32; a tensor without quantization is returned unchanged."""
    if spec.scale is None or spec.zero_point is None:
        return q
    return (np.float32(spec.scale) * (q.astype(np.int64) - spec.zero_point)).astype(np.float32)


def top_k(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The ``k`` highest ``(class, score)`` pairs of a classifier output, best first; ties: lower class first."""
    flat = np.asarray(scores).reshape(-1)
    order = np.argsort(-flat.astype(np.float64), kind="stable")[:k]
    return [(int(i), flat[i].item()) for i in order]


def _conform(arr: np.ndarray, spec: TensorSpec, where: str, *, quantize_floats: bool,
             reshape: bool) -> tuple[np.ndarray, bool]:
    """``arr`` checked (and converted) for ``spec``; the flag says it carries a leading batch axis."""
    if arr.dtype.kind == "f" and spec.dtype.kind in "iu":
        if not quantize_floats:
            scale = f" (scale {spec.scale:.6g}, zero point {spec.zero_point})" if spec.scale is not None else ""
            raise InvalidArgumentError(f"{where} is {arr.dtype.name} but input {spec.name!r} is {spec.dtype.name}; "
                                       f"pass --quantize to quantize it with the input's quantization{scale}, or "
                                       f"save {spec.dtype.name} values")
        arr = quantize(arr, spec)
    elif arr.dtype != spec.dtype:
        if arr.dtype.kind in "iu" and spec.dtype.kind in "iu" and arr.size:
            info = np.iinfo(spec.dtype)
            if arr.min() < info.min or arr.max() > info.max:
                raise InvalidArgumentError(f"{where} is {arr.dtype.name} with values outside {spec.dtype.name}'s "
                                           f"range [{info.min}, {info.max}] (input {spec.name!r})")
            arr = arr.astype(spec.dtype)
        else:
            raise InvalidArgumentError(f"{where} is {arr.dtype.name}; input {spec.name!r} is {spec.dtype.name}")
    if arr.shape == spec.shape:
        return arr, False
    if arr.ndim == len(spec.shape) + 1 and arr.shape[1:] == spec.shape:
        return arr, True
    size = int(np.prod(spec.shape, dtype=np.int64))
    if reshape and arr.size and arr.size % size == 0:
        n = arr.size // size
        return (arr.reshape(spec.shape), False) if n == 1 else (arr.reshape((n, *spec.shape)), True)
    hint = (" (--reshape reinterprets an array of the same size, in C order)" if arr.size % max(size, 1) == 0
            else "")
    raise InvalidArgumentError(f"{where} has shape {arr.shape}; input {spec.name!r} must be {spec.dtype.name} "
                               f"{list(spec.shape)}: exactly {spec.shape}, or (N, {', '.join(map(str, spec.shape))}) "
                               f"for N samples{hint}")


def load_samples(paths: Sequence[str], specs: Sequence[TensorSpec], *, quantize_floats: bool = False,
                 reshape: bool = False) -> Samples:
    """The samples ``-i`` names (see the module docstring for the order and the names).

    :raises InvalidArgumentError: a missing or unreadable file, a wrong count, dtype or shape.
    """
    if len(paths) == 1 and Path(paths[0]).is_dir():
        return _directory(Path(paths[0]), specs, quantize_floats=quantize_floats, reshape=reshape)
    if len(paths) == 1 and Path(paths[0]).suffix.lower() == ".npz":
        return load_dataset(paths[0], specs, quantize_floats=quantize_floats, reshape=reshape)
    if len(paths) != len(specs):
        raise InvalidArgumentError(f"the model has {len(specs)} input(s) ({', '.join(s.name for s in specs)}); "
                                   f"got {len(paths)} -i file(s); give one .npy per input, in order")
    arrays, batched = [], []
    for path, spec in zip(paths, specs):
        arr, b = _conform(read_npy(path), spec, f"input file {path!r}", quantize_floats=quantize_floats,
                          reshape=reshape)
        arrays.append(arr)
        batched.append(b)
    if not any(batched):
        return Samples([arrays], [Path(paths[0]).name])
    if not all(batched) or len({a.shape[0] for a in arrays}) != 1:
        raise InvalidArgumentError("stacked inputs must all have the same leading batch axis: got shapes "
                                   + ", ".join(str(a.shape) for a in arrays))
    n = arrays[0].shape[0]
    name = Path(paths[0]).name
    return Samples([[a[i] for a in arrays] for i in range(n)], [f"{name}[{i}]" for i in range(n)])


def _directory(directory: Path, specs: Sequence[TensorSpec], *, quantize_floats: bool, reshape: bool) -> Samples:
    if len(specs) != 1:
        raise InvalidArgumentError(f"a directory of inputs needs a model with exactly one input; this one has "
                                   f"{len(specs)}: give one -i file per input")
    files = sorted(p for p in directory.iterdir() if p.suffix.lower() == ".npy")
    if not files:
        raise InvalidArgumentError(f"no .npy files in directory {str(directory)!r}")
    inputs = []
    for f in files:
        arr, batched = _conform(read_npy(f), specs[0], f"input file {str(f)!r}", quantize_floats=quantize_floats,
                                reshape=reshape)
        if batched and arr.shape[0] != 1:
            raise InvalidArgumentError(f"input file {str(f)!r} holds {arr.shape[0]} samples; in a directory each "
                                       f"file is one sample of shape {specs[0].shape}")
        inputs.append([arr[0] if batched else arr])
    return Samples(inputs, [f.name for f in files])


def load_dataset(path: str | Path, specs: Sequence[TensorSpec], *, quantize_floats: bool = False,
                 reshape: bool = False) -> Samples:
    """A dataset: a directory of ``.npy`` files or a ``.npz`` archive (labels from ``y``/``labels``)."""
    p = Path(path)
    if p.is_dir():
        return _directory(p, specs, quantize_floats=quantize_floats, reshape=reshape)
    p = _existing_file(p, "dataset", (".npz", ".npy"))
    if p.suffix.lower() == ".npy":
        return load_samples([str(p)], specs, quantize_floats=quantize_floats, reshape=reshape)
    if len(specs) != 1:
        raise InvalidArgumentError(f"a .npz dataset needs a model with exactly one input; this one has {len(specs)}")
    try:
        with np.load(p, allow_pickle=False) as archive:
            arrays = {k: archive[k] for k in archive.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise InvalidArgumentError(f"dataset {str(p)!r} is not a readable .npz archive of numeric arrays: "
                                   f"{exc}") from None
    data_keys = [k for k in arrays if k not in LABEL_KEYS]
    key = "x" if "x" in arrays else (data_keys[0] if len(data_keys) == 1 else None)
    if key is None:
        raise InvalidArgumentError(f"dataset {str(p)!r} has arrays {sorted(arrays)}; name the inputs 'x' "
                                   f"(and the labels 'y')")
    arr, batched = _conform(arrays[key], specs[0], f"dataset {str(p)!r} array {key!r}",
                            quantize_floats=quantize_floats, reshape=reshape)
    if not batched:
        arr = arr[None]
    labels = next((arrays[k] for k in LABEL_KEYS if k in arrays), None)
    if labels is not None and len(labels) != len(arr):
        raise InvalidArgumentError(f"dataset {str(p)!r}: {len(arr)} samples but {len(labels)} labels")
    return Samples([[a] for a in arr], [f"{p.name}[{i}]" for i in range(len(arr))], labels)


def read_labels(path: str | Path, count: int) -> np.ndarray:
    """Integer labels, one per sample in order: a ``.npy`` array or a text file of one integer a line."""
    p = Path(path)
    if p.suffix.lower() == ".npy":
        labels = read_npy(p, "labels")
    else:
        p = _existing_file(p, "labels", (".txt", ".csv"))
        try:
            labels = np.array([int(line.split(",")[-1]) for line in p.read_text().split("\n") if line.strip()])
        except (ValueError, OSError, UnicodeDecodeError) as exc:
            raise InvalidArgumentError(f"labels {str(p)!r}: one integer class per line expected ({exc})") from None
    labels = np.asarray(labels).reshape(-1)
    if labels.dtype.kind not in "iu":
        raise InvalidArgumentError(f"labels {str(p)!r} must be integer classes, not {labels.dtype.name}")
    if len(labels) != count:
        raise InvalidArgumentError(f"labels {str(p)!r} has {len(labels)} labels for {count} samples")
    return labels
