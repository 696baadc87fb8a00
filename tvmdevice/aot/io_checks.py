"""The checks of what a caller hands an executor: inputs, ``out`` arrays, stacked batches, workers.

Each check explains a bad argument -- which input or output, what it expects
and what it got -- as an :class:`~tvmdevice.errors.InvalidArgumentError`.  The
executor calls them only when its fast path (the C ports' comparison against
cached shapes and dtypes) declined an argument, so they may take their time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..errors import InvalidArgumentError

if TYPE_CHECKING:  # pragma: no cover
    from ..ir import Graph

__all__ = ["InputPort", "check_inputs", "check_out", "check_stacked", "check_batch_out", "check_workers"]

#: An input's arena view with the shape and dtype it takes.
InputPort = tuple[np.ndarray, tuple[int, ...], np.dtype]


def check_inputs(graph: "Graph", inputs: Any) -> list[np.ndarray]:
    """``inputs`` as one array per graph input, each of the input's dtype and exact shape."""
    expected = len(graph.inputs)
    usage = f"pass a list of {expected} numpy array(s), one per model input, e.g. run([x])"
    if inputs is None or isinstance(inputs, (np.ndarray, str, bytes, Mapping)) \
            or not isinstance(inputs, (Sequence, Iterator)):
        raise InvalidArgumentError(f"model {graph.name!r}: inputs must be a list of arrays, got "
                                   f"{type(inputs).__name__}; {usage}")
    values = list(inputs)
    if len(values) != expected:
        raise InvalidArgumentError(f"model {graph.name!r} takes {expected} input(s), got {len(values)}; {usage}")
    arrays = []
    for k, (t, value) in enumerate(zip(graph.inputs, values)):
        tensor = graph.tensors[t]
        shape, dtype = tuple(tensor.shape), np.dtype(tensor.dtype)
        what = f"model {graph.name!r}: input {k} ({tensor.name!r})"
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError) as exc:
            raise InvalidArgumentError(f"{what} is not an array ({type(exc).__name__}: {exc}); "
                                       f"pass a {dtype.name} array of shape {shape}") from None
        if arr.dtype != dtype:
            raise InvalidArgumentError(f"{what} must be {dtype.name}, got {arr.dtype.name}")
        # Exact shapes, no reshaping: a (1, 10, 49, 1) for a (1, 49, 10, 1)
        # input has the right size and the wrong meaning.
        if arr.shape != shape:
            raise InvalidArgumentError(f"{what} must have shape {shape}, got {arr.shape}")
        arrays.append(arr)
    return arrays


def check_out(graph: "Graph", out: Any, views: Sequence[np.ndarray]) -> Sequence[np.ndarray]:
    """``out`` for a run: one writable array per graph output, of its dtype and exactly its shape (``views``)."""
    if (type(out) is list or type(out) is tuple) and len(out) == len(views):
        for arr, view in zip(out, views):
            if type(arr) is not np.ndarray or arr.shape != view.shape or arr.dtype != view.dtype \
                    or not arr.flags.writeable:
                break
        else:
            return out
    expected = len(views)
    usage = f"pass a list of {expected} writable numpy array(s), one per model output, e.g. run([x], out=[y])"
    if isinstance(out, (np.ndarray, str, bytes, Mapping)) or not isinstance(out, Sequence):
        raise InvalidArgumentError(f"model {graph.name!r}: out must be a list of arrays, got "
                                   f"{type(out).__name__}; {usage}")
    if len(out) != expected:
        raise InvalidArgumentError(f"model {graph.name!r} has {expected} output(s), out has {len(out)}; {usage}")
    for k, (arr, view, t) in enumerate(zip(out, views, graph.outputs)):
        what = f"model {graph.name!r}: out[{k}] (output {graph.tensors[t].name!r})"
        if not isinstance(arr, np.ndarray):
            raise InvalidArgumentError(f"{what} is {type(arr).__name__}, not a numpy array; pass an array "
                                       f"like np.empty({view.shape}, np.{view.dtype.name})")
        if arr.dtype != view.dtype:
            raise InvalidArgumentError(f"{what} must be {view.dtype.name}, got {arr.dtype.name}")
        if arr.shape != view.shape:
            raise InvalidArgumentError(f"{what} must have shape {view.shape}, got {arr.shape}")
        if not arr.flags.writeable:
            raise InvalidArgumentError(f"{what} is read-only; pass a writable array")
    return out


def check_stacked(graph: "Graph", inputs: Any, ports: Sequence[InputPort]) -> tuple[list[np.ndarray], int]:
    """A batch's inputs, one ``(N, *input_shape)`` array per graph input, and ``N``."""
    name = graph.name
    usage = (f"pass a list of {len(ports)} stacked array(s), one per model input, each of shape "
             f"(N, *input_shape), e.g. run_batch([np.stack(samples)])")
    if isinstance(inputs, (np.ndarray, str, bytes, Mapping)) or not isinstance(inputs, Sequence) \
            or len(inputs) != len(ports):
        raise InvalidArgumentError(f"model {name!r}: run_batch takes {len(ports)} stacked input(s); {usage}")
    stacked = [np.asarray(x) for x in inputs]
    sizes = {x.shape[0] if x.ndim else -1 for x in stacked}
    if len(sizes) != 1 or -1 in sizes:
        raise InvalidArgumentError(f"model {name!r}: every stacked input needs the same leading batch size, "
                                   f"got shapes {[x.shape for x in stacked]}; {usage}")
    (n,) = sizes
    for k, (x, (_, shape, dtype)) in enumerate(zip(stacked, ports)):
        if x.shape[1:] != shape or x.dtype != dtype:
            raise InvalidArgumentError(f"model {name!r}: stacked input {k} must be {dtype.name} of shape "
                                       f"(N, *{shape}), got {x.dtype.name} {x.shape}")
    return stacked, n


def check_batch_out(graph: "Graph", out: Any, views: Sequence[np.ndarray], n: int) -> None:
    """A batch's ``out``: one writable ``(n, *output_shape)`` array per graph output."""
    if isinstance(out, (np.ndarray, str, bytes, Mapping)) or not isinstance(out, Sequence) \
            or len(out) != len(views):
        raise InvalidArgumentError(f"model {graph.name!r}: out must be a list of {len(views)} array(s), "
                                   f"one (N, *output_shape) array per model output")
    for k, (arr, view) in enumerate(zip(out, views)):
        if not isinstance(arr, np.ndarray) or arr.shape != (n, *view.shape) or arr.dtype != view.dtype \
                or not arr.flags.writeable:
            got = f"{arr.dtype.name} {arr.shape}" if isinstance(arr, np.ndarray) else type(arr).__name__
            raise InvalidArgumentError(f"model {graph.name!r}: out[{k}] must be a writable "
                                       f"{view.dtype.name} array of shape {(n, *view.shape)}, got {got}")


def check_workers(graph: "Graph", workers: Any, stateful: bool) -> int:
    """A batch's ``workers`` (None means 1); more than one is refused for a model with operator state."""
    if workers is None:
        workers = 1
    if type(workers) is not int or workers < 1:
        raise InvalidArgumentError(f"run_batch: workers must be None or an int >= 1, got {workers!r}")
    if workers > 1 and stateful:
        raise InvalidArgumentError(f"model {graph.name!r} has operator state (LSTM/SVDF variables): its samples "
                                   f"depend on each other, run them in order (workers=None)")
    return workers
