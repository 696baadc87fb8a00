"""Builder methods for the shape and data-movement operators (mixed into
:class:`tvmdevice.aot.builder.ModelBuilder`).

Outputs keep their input's type (int8 or int16) and quantization, as the
TFLite converter writes them: these operators move values, never rescale.
Index operands (perm, begin, size, axis...) are written as constant tensors.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tvmdevice.aot.builder._common import OPS, TT, TensorRef

__all__ = ["ShapeMixin"]

_TYPES = {np.dtype(np.int8): TT.INT8, np.dtype(np.int16): TT.INT16}


class ShapeMixin:
    """Operators that move values.  Relies on the builder's ``_tensor`` and ``_op`` helpers."""

    _tensor: Any
    _op: Any

    def _like(self, x: TensorRef, shape: Sequence[int]) -> TensorRef:
        return self._tensor(tuple(shape), _TYPES[np.dtype(x.dtype)], x.scale, x.zero_point)

    def _ints(self, values: Sequence[int] | np.ndarray, dtype: str = "int32") -> TensorRef:
        array = np.asarray(values, dtype=np.int64)
        ttype = TT.INT64 if dtype == "int64" else TT.INT32
        return self._tensor(array.shape, ttype, data=array)

    def transpose(self, x: TensorRef, perm: Sequence[int]) -> TensorRef:
        """TRANSPOSE by the constant permutation ``perm``."""
        y = self._like(x, [x.shape[p] for p in perm])
        self._op(OPS.TRANSPOSE, [x.index, self._ints(perm).index], [y.index], ("TransposeOptions", {}))
        return y

    def slice(self, x: TensorRef, begin: Sequence[int], size: Sequence[int], index_dtype: str = "int32") -> TensorRef:
        """SLICE of ``size`` elements from ``begin`` per dimension (-1: to the end)."""
        shape = [d - b if s == -1 else s for d, b, s in zip(x.shape, begin, size)]
        y = self._like(x, shape)
        self._op(OPS.SLICE, [x.index, self._ints(begin, index_dtype).index, self._ints(size, index_dtype).index],
                 [y.index], ("SliceOptions", {}))
        return y

    def strided_slice(self, x: TensorRef, begin: Sequence[int], end: Sequence[int], strides: Sequence[int],
                      begin_mask: int = 0, end_mask: int = 0, shrink_axis_mask: int = 0) -> TensorRef:
        """STRIDED_SLICE with numpy slice semantics per dimension (masks drop begin / end; shrink drops the axis)."""
        shape = []
        for d, (n, b, e, s) in enumerate(zip(x.shape, begin, end, strides)):
            if shrink_axis_mask >> d & 1:
                continue
            cut = slice(None if begin_mask >> d & 1 else b, None if end_mask >> d & 1 else e, s)
            shape.append(len(range(n)[cut]))
        y = self._like(x, shape)
        ins = [x.index, self._ints(begin).index, self._ints(end).index, self._ints(strides).index]
        self._op(OPS.STRIDED_SLICE, ins, [y.index], ("StridedSliceOptions", {
            "BeginMask": begin_mask, "EndMask": end_mask, "ShrinkAxisMask": shrink_axis_mask}))
        return y

    def split(self, x: TensorRef, num_splits: int, axis: int = -1) -> list[TensorRef]:
        """SPLIT into ``num_splits`` equal parts along ``axis``."""
        ax = axis % len(x.shape)
        shape = list(x.shape)
        shape[ax] //= num_splits
        ys = [self._like(x, shape) for _ in range(num_splits)]
        self._op(OPS.SPLIT, [self._ints([axis]).index, x.index], [y.index for y in ys],
                 ("SplitOptions", {"NumSplits": num_splits}))
        return ys

    def split_v(self, x: TensorRef, size_splits: Sequence[int], axis: int = -1) -> list[TensorRef]:
        """SPLIT_V into parts of ``size_splits`` (one may be -1) along ``axis``."""
        ax = axis % len(x.shape)
        sizes = list(size_splits)
        if -1 in sizes:
            sizes[sizes.index(-1)] = x.shape[ax] - (sum(sizes) + 1)
        ys = [self._like(x, x.shape[:ax] + (s,) + x.shape[ax + 1:]) for s in sizes]
        self._op(OPS.SPLIT_V, [x.index, self._ints(size_splits).index, self._ints([axis]).index],
                 [y.index for y in ys], ("SplitVOptions", {"NumSplits": len(sizes)}))
        return ys

    def pack(self, xs: Sequence[TensorRef], axis: int = 0) -> TensorRef:
        """PACK (stack) equal-shaped tensors along a new ``axis``; the output takes the first's quantization."""
        ax = axis % (len(xs[0].shape) + 1)
        y = self._like(xs[0], xs[0].shape[:ax] + (len(xs),) + xs[0].shape[ax:])
        self._op(OPS.PACK, [t.index for t in xs], [y.index], ("PackOptions", {"ValuesCount": len(xs), "Axis": axis}))
        return y

    def unpack(self, x: TensorRef, axis: int = 0) -> list[TensorRef]:
        """UNPACK (unstack) along ``axis``: one output per slice."""
        ax = axis % len(x.shape)
        ys = [self._like(x, x.shape[:ax] + x.shape[ax + 1:]) for _ in range(x.shape[ax])]
        self._op(OPS.UNPACK, [x.index], [y.index for y in ys], ("UnpackOptions", {"Num": len(ys), "Axis": axis}))
        return ys

    def squeeze(self, x: TensorRef, dims: Sequence[int] = ()) -> TensorRef:
        """SQUEEZE the size-1 dimensions ``dims`` (all of them when empty)."""
        drop = {d % len(x.shape) for d in dims} if dims else {k for k, n in enumerate(x.shape) if n == 1}
        y = self._like(x, [n for k, n in enumerate(x.shape) if k not in drop])
        self._op(OPS.SQUEEZE, [x.index], [y.index], ("SqueezeOptions", {"SqueezeDims": list(dims)}))
        return y

    def expand_dims(self, x: TensorRef, axis: int) -> TensorRef:
        """EXPAND_DIMS: a size-1 dimension inserted at ``axis``."""
        ax = axis % (len(x.shape) + 1)
        y = self._like(x, x.shape[:ax] + (1,) + x.shape[ax:])
        self._op(OPS.EXPAND_DIMS, [x.index, self._ints([axis]).index], [y.index], ("ExpandDimsOptions", {}))
        return y

    def gather(self, x: TensorRef, positions: Sequence[int] | np.ndarray | TensorRef, axis: int = 0,
               batch_dims: int = 0) -> TensorRef:
        """GATHER along ``axis`` at ``positions`` (a constant array, or an int32 tensor of the model)."""
        pos = positions if isinstance(positions, TensorRef) else self._ints(positions)
        ax = axis % len(x.shape)
        y = self._like(x, x.shape[:ax] + pos.shape[batch_dims:] + x.shape[ax + 1:])
        self._op(OPS.GATHER, [x.index, pos.index], [y.index],
                 ("GatherOptions", {"Axis": axis, "BatchDims": batch_dims}))
        return y

    def padv2(self, x: TensorRef, paddings: Sequence[Sequence[int]], value: int | None = None) -> TensorRef:
        """PADV2; ``value`` is the fill (raw, in ``x``'s quantization), ``None`` omits constant_values."""
        pads = np.array(paddings, dtype=np.int64).reshape(len(x.shape), 2)
        y = self._like(x, [int(d + a + b) for d, (a, b) in zip(x.shape, pads)])
        ins = [x.index, self._ints(pads).index]
        if value is not None:
            ins.append(self._tensor((), _TYPES[np.dtype(x.dtype)], x.scale, x.zero_point,
                                    data=np.array(value, dtype=x.dtype)).index)
        self._op(OPS.PADV2, ins, [y.index], ("PadV2Options", {}))
        return y

    def _resize(self, code: int, table: str, x: TensorRef, size: Sequence[int], align_corners: bool,
                half_pixel_centers: bool) -> TensorRef:
        y = self._like(x, (x.shape[0], size[0], size[1], x.shape[3]))
        self._op(code, [x.index, self._ints(size).index], [y.index],
                 (table, {"AlignCorners": bool(align_corners), "HalfPixelCenters": bool(half_pixel_centers)}))
        return y

    def resize_nearest(self, x: TensorRef, size: Sequence[int], align_corners: bool = False,
                       half_pixel_centers: bool = False) -> TensorRef:
        """RESIZE_NEAREST_NEIGHBOR of an NHWC tensor to ``size`` = (height, width)."""
        return self._resize(OPS.RESIZE_NEAREST_NEIGHBOR, "ResizeNearestNeighborOptions", x, size, align_corners,
                            half_pixel_centers)

    def resize_bilinear(self, x: TensorRef, size: Sequence[int], align_corners: bool = False,
                        half_pixel_centers: bool = False) -> TensorRef:
        """RESIZE_BILINEAR of an NHWC tensor to ``size`` = (height, width)."""
        return self._resize(OPS.RESIZE_BILINEAR, "ResizeBilinearOptions", x, size, align_corners, half_pixel_centers)

    def broadcast_to(self, x: TensorRef, shape: Sequence[int], index_dtype: str = "int32") -> TensorRef:
        """BROADCAST_TO ``shape`` (numpy broadcasting rules)."""
        y = self._like(x, shape)
        self._op(OPS.BROADCAST_TO, [x.index, self._ints(shape, index_dtype).index], [y.index],
                 ("BroadcastToOptions", {}))
        return y
