"""The parameter space of the shape and data-movement operators, for the kernels contract.

Each function draws the keyword arguments of
:func:`tvmdevice.aot.builder.single_op_model` for one operator type (merged
into :data:`tvmdevice.testing.contracts.kernel_space.STRATEGIES`): shapes,
axes (negative ones too), index operands, masks and resize options.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["STRATEGIES"]


def _base(draw: Any, rank_min: int = 1) -> tuple[Any, tuple[int, ...], dict[str, Any]]:
    from hypothesis import strategies as st

    from .kernel_space import _quant

    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=rank_min, max_size=4), label="input_shape"))
    return st, shape, {"input_shape": shape, **_quant(draw)}


def transpose(draw: Any) -> dict[str, Any]:
    st, shape, out = _base(draw)
    return {**out, "perm": draw(st.permutations(range(len(shape))), label="perm")}


def slice_(draw: Any) -> dict[str, Any]:
    st, shape, out = _base(draw)
    begin = [draw(st.integers(0, d - 1), label="begin") for d in shape]
    size = [draw(st.sampled_from([-1, *range(1, d - b + 1)]), label="size") for d, b in zip(shape, begin)]
    return {**out, "begin": begin, "size": size}


def strided_slice(draw: Any) -> dict[str, Any]:
    st, shape, out = _base(draw)
    rank = len(shape)
    # Non-empty slices: start inside the dimension (either sign), end on the stride's side of it.
    begin = [draw(st.integers(-d, d - 1), label="begin") for d in shape]
    strides = [draw(st.sampled_from([-2, -1, 1, 2, 3]), label="stride") for _ in shape]
    end = [draw(st.integers(b % d + 1, d + 1) if s > 0 else st.integers(-d - 1, b % d - d - 1), label="end")
           for b, s, d in zip(begin, strides, shape)]
    return {**out, "begin": begin, "end": end, "strides": strides,
            "shrink_axis_mask": draw(st.integers(0, 2**rank - 1), label="shrink_axis_mask") if rank > 1 else 0}


def split(draw: Any) -> dict[str, Any]:
    st, shape, out = _base(draw)
    axis = draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    parts = [n for n in range(1, shape[axis] + 1) if shape[axis] % n == 0]
    return {**out, "axis": axis, "num_splits": draw(st.sampled_from(parts), label="num_splits")}


def split_v(draw: Any) -> dict[str, Any]:
    st, shape, out = _base(draw)
    axis = draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    n = shape[axis]
    cuts = sorted(set(draw(st.lists(st.integers(1, n - 1), max_size=3), label="cuts"))) if n > 1 else []
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, n])]
    if draw(st.booleans(), label="infer_one"):
        sizes[draw(st.integers(0, len(sizes) - 1), label="inferred")] = -1
    return {**out, "axis": axis, "size_splits": sizes}


def pack(draw: Any) -> dict[str, Any]:
    st, shape, out = _base(draw)
    n = draw(st.integers(1, 4), label="inputs")
    return {**out, "input_shapes": [shape] * n, "axis": draw(st.integers(-len(shape) - 1, len(shape)), label="axis")}


def unpack(draw: Any) -> dict[str, Any]:
    st, shape, out = _base(draw)
    return {**out, "axis": draw(st.integers(-len(shape), len(shape) - 1), label="axis")}


def squeeze(draw: Any) -> dict[str, Any]:
    st, shape, out = _base(draw)
    ones = [k for k, d in enumerate(shape) if d == 1]
    dims = draw(st.lists(st.sampled_from(ones), unique=True), label="squeeze_dims") if ones else []
    return {**out, "dims": dims}


def expand_dims(draw: Any) -> dict[str, Any]:
    st, shape, out = _base(draw)
    return {**out, "axis": draw(st.integers(-len(shape) - 1, len(shape)), label="axis")}


def gather(draw: Any) -> dict[str, Any]:
    st, shape, out = _base(draw)
    axis = draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    positions = draw(st.lists(st.integers(0, shape[axis] - 1), min_size=1, max_size=5), label="positions")
    return {**out, "axis": axis, "positions": positions}


def padv2(draw: Any) -> dict[str, Any]:
    st, shape, out = _base(draw)
    paddings = [[draw(st.integers(0, 2)), draw(st.integers(0, 2))] for _ in shape]
    return {**out, "paddings": paddings, "value": draw(st.one_of(st.none(), st.integers(-128, 127)), label="value")}


def resize(draw: Any) -> dict[str, Any]:
    from hypothesis import strategies as st

    from .kernel_space import _nhwc, _quant

    mode = draw(st.sampled_from(["plain", "align_corners", "half_pixel_centers"]), label="mode")
    return {"input_shape": _nhwc(draw), "size": (draw(st.integers(1, 9)), draw(st.integers(1, 9))),
            "align_corners": mode == "align_corners", "half_pixel_centers": mode == "half_pixel_centers",
            **_quant(draw)}


def broadcast_to(draw: Any) -> dict[str, Any]:
    st, shape, out = _base(draw)
    lead = draw(st.lists(st.integers(1, 3), max_size=4 - len(shape)), label="new_dims")
    target = [*lead, *(draw(st.integers(1, 3)) if d == 1 else d for d in shape)]
    return {**out, "shape": tuple(target)}


#: operator type -> function drawing single_op_model keyword arguments.
STRATEGIES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "TRANSPOSE": transpose, "SLICE": slice_, "STRIDED_SLICE": strided_slice, "SPLIT": split, "SPLIT_V": split_v,
    "PACK": pack, "UNPACK": unpack, "SQUEEZE": squeeze, "EXPAND_DIMS": expand_dims, "GATHER": gather,
    "PADV2": padv2, "RESIZE_NEAREST_NEIGHBOR": resize, "RESIZE_BILINEAR": resize, "BROADCAST_TO": broadcast_to,
}
