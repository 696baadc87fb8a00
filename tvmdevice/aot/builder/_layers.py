"""Builder methods for pooling, softmax, element-wise, shape and quantization
operators (mixed into :class:`tvmdevice.aot.builder.ModelBuilder`)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tvmdevice.aot.builder._common import ACTIVATIONS, OPS, PADDINGS, TT, TensorRef, out_size, pair, scale_of, ttype_of

__all__ = ["LayersMixin"]


class LayersMixin:
    """Operators without weights.  Relies on the builder's ``_tensor``,
    ``_activation_out`` and ``_op`` helpers."""

    _tensor: Any
    _activation_out: Any
    _op: Any

    def _pool(self, code: int, x: TensorRef, pool: int | Sequence[int], stride: int | Sequence[int] | None,
              padding: str, activation: str) -> TensorRef:
        (ph, pw) = pair(pool)
        (sh, sw) = pair(stride if stride is not None else (ph, pw))
        n, h, w, c = x.shape
        shape = (n, out_size(padding, h, ph, sh, 1), out_size(padding, w, pw, sw, 1), c)
        # TFLM requires pooling to keep the input's quantization (and type).
        y = self._tensor(shape, ttype_of(x), scale_of(x), x.zero_point)
        self._op(code, [x.index], [y.index], ("Pool2DOptions", {
            "Padding": PADDINGS[padding], "StrideW": sw, "StrideH": sh, "FilterWidth": pw, "FilterHeight": ph,
            "FusedActivationFunction": ACTIVATIONS[activation]}))
        return y

    def avg_pool2d(self, x: TensorRef, pool: int | Sequence[int] = 2, stride: int | Sequence[int] | None = None,
                   padding: str = "VALID", activation: str = "NONE") -> TensorRef:
        """AVERAGE_POOL_2D (stride defaults to the pool size)."""
        return self._pool(OPS.AVERAGE_POOL_2D, x, pool, stride, padding, activation)

    def max_pool2d(self, x: TensorRef, pool: int | Sequence[int] = 2, stride: int | Sequence[int] | None = None,
                   padding: str = "VALID", activation: str = "NONE") -> TensorRef:
        """MAX_POOL_2D (stride defaults to the pool size)."""
        return self._pool(OPS.MAX_POOL_2D, x, pool, stride, padding, activation)

    def softmax(self, x: TensorRef, beta: float = 1.0, out_dtype: str | None = None) -> TensorRef:
        """SOFTMAX along the last axis; the output quantization is TFLM's fixed one per type:
        int8 1/256, -128; int16 from int8 1/65536, -32768; int16 from int16 1/32768, 0.

        :param out_dtype: ``"int8"`` or ``"int16"``; default the input's type.
        """
        out_type = {"int8": TT.INT8, "int16": TT.INT16}[out_dtype] if out_dtype else ttype_of(x)
        if out_type == TT.INT8:
            y = self._tensor(x.shape, TT.INT8, 1.0 / 256, -128)
        elif ttype_of(x) == TT.INT8:
            y = self._tensor(x.shape, TT.INT16, 1.0 / 65536, -32768)
        else:
            y = self._tensor(x.shape, TT.INT16, 1.0 / 32768, 0)
        self._op(OPS.SOFTMAX, [x.index], [y.index], ("SoftmaxOptions", {"Beta": float(beta)}))
        return y

    def _binary(self, code: int, table: str, a: TensorRef, b: TensorRef, activation: str,
                out_scale: float | None, out_zero_point: int | None, default_scale: float) -> TensorRef:
        shape = np.broadcast_shapes(a.shape, b.shape)
        y = self._activation_out(shape, out_scale, out_zero_point, default_scale, ttype=ttype_of(a))
        self._op(code, [a.index, b.index], [y.index], (table, {"FusedActivationFunction": ACTIVATIONS[activation]}))
        return y

    def add(self, a: TensorRef, b: TensorRef, activation: str = "NONE", out_scale: float | None = None,
            out_zero_point: int | None = None) -> TensorRef:
        """ADD with numpy-style broadcasting."""
        return self._binary(OPS.ADD, "AddOptions", a, b, activation, out_scale, out_zero_point,
                            scale_of(a) + scale_of(b))

    def sub(self, a: TensorRef, b: TensorRef, activation: str = "NONE", out_scale: float | None = None,
            out_zero_point: int | None = None) -> TensorRef:
        """SUB (``a - b``) with numpy-style broadcasting."""
        return self._binary(OPS.SUB, "SubOptions", a, b, activation, out_scale, out_zero_point,
                            scale_of(a) + scale_of(b))

    def mul(self, a: TensorRef, b: TensorRef, activation: str = "NONE", out_scale: float | None = None,
            out_zero_point: int | None = None) -> TensorRef:
        """MUL with numpy-style broadcasting."""
        return self._binary(OPS.MUL, "MulOptions", a, b, activation, out_scale, out_zero_point,
                            scale_of(a) * scale_of(b) * 64.0)

    def reshape(self, x: TensorRef, shape: Sequence[int], shape_tensor: bool = True,
                new_shape_option: bool = True) -> TensorRef:
        """RESHAPE (one -1 allowed); optionally with the shape operand and/or the option."""
        shape = list(shape)
        if shape.count(-1) == 1:
            known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
            shape[shape.index(-1)] = int(np.prod(x.shape, dtype=np.int64)) // max(known, 1)
        y = self._tensor(shape, TT.INT8, scale_of(x), x.zero_point)
        ins = [x.index]
        if shape_tensor:
            ins.append(self._tensor((len(shape),), TT.INT32, data=np.array(shape, dtype=np.int32)).index)
        options = ("ReshapeOptions", {"NewShape": list(shape)}) if new_shape_option else None
        self._op(OPS.RESHAPE, ins, [y.index], options)
        return y

    def pad(self, x: TensorRef, paddings: Sequence[Sequence[int]], paddings_dtype: str = "int32") -> TensorRef:
        """PAD with the zero point (real 0); ``paddings`` is [[before, after], ...] per dimension."""
        pads = np.array(paddings, dtype=np.int64).reshape(len(x.shape), 2)
        ttype = TT.INT64 if paddings_dtype == "int64" else TT.INT32
        p = self._tensor(pads.shape, ttype, data=pads)
        shape = tuple(int(d + a + b) for d, (a, b) in zip(x.shape, pads))
        y = self._tensor(shape, TT.INT16 if x.dtype == np.int16 else TT.INT8, scale_of(x), x.zero_point)
        self._op(OPS.PAD, [x.index, p.index], [y.index], ("PadOptions", {}))
        return y

    def concatenation(self, xs: Sequence[TensorRef], axis: int = -1) -> TensorRef:
        """CONCATENATION; the output takes the first input's quantization."""
        rank = len(xs[0].shape)
        ax = axis + rank if axis < 0 else axis
        shape = list(xs[0].shape)
        shape[ax] = sum(t.shape[ax] for t in xs)
        y = self._tensor(shape, TT.INT16 if xs[0].dtype == np.int16 else TT.INT8, scale_of(xs[0]), xs[0].zero_point)
        self._op(OPS.CONCATENATION, [t.index for t in xs], [y.index],
                 ("ConcatenationOptions", {"Axis": int(axis), "FusedActivationFunction": 0}))
        return y

    def mean(self, x: TensorRef, axes: Sequence[int], keep_dims: bool = True, out_scale: float | None = None,
             out_zero_point: int | None = None) -> TensorRef:
        """MEAN over ``axes``; the output keeps the input's quantization unless given."""
        rank = len(x.shape)
        resolved = {a + rank if a < 0 else a for a in axes}
        shape = [1 if k in resolved else d for k, d in enumerate(x.shape) if keep_dims or k not in resolved]
        a = self._tensor((len(axes),), TT.INT32, data=np.array(axes, dtype=np.int32))
        y = self._tensor(shape, TT.INT8, out_scale if out_scale is not None else scale_of(x),
                         out_zero_point if out_zero_point is not None else x.zero_point)
        self._op(OPS.MEAN, [x.index, a.index], [y.index], ("ReducerOptions", {"KeepDims": bool(keep_dims)}))
        return y

    def logistic(self, x: TensorRef) -> TensorRef:
        """LOGISTIC; int8 output is always 1/256, -128, int16 output 1/32768, 0."""
        if ttype_of(x) == TT.INT16:
            y = self._tensor(x.shape, TT.INT16, 1.0 / 32768, 0)
        else:
            y = self._tensor(x.shape, TT.INT8, 1.0 / 256, -128)
        self._op(OPS.LOGISTIC, [x.index], [y.index])
        return y

    def tanh(self, x: TensorRef) -> TensorRef:
        """TANH; int8 output is always 1/128, 0, int16 output 1/32768, 0."""
        if ttype_of(x) == TT.INT16:
            y = self._tensor(x.shape, TT.INT16, 1.0 / 32768, 0)
        else:
            y = self._tensor(x.shape, TT.INT8, 1.0 / 128, 0)
        self._op(OPS.TANH, [x.index], [y.index])
        return y

    def quantize(self, x: TensorRef, scale: float, zero_point: int = 0, dtype: str = "int8") -> TensorRef:
        """QUANTIZE from float32 (or int8/int16, which requantizes) to int8, int16 or int32 (``dtype``)."""
        types = {"int8": TT.INT8, "int16": TT.INT16, "int32": TT.INT32}
        if dtype not in types:
            raise ValueError(f"QUANTIZE's output dtype must be one of {', '.join(types)}, not {dtype!r}")
        y = self._tensor(x.shape, types[dtype], scale, zero_point)
        self._op(OPS.QUANTIZE, [x.index], [y.index])
        return y

    def dequantize(self, x: TensorRef) -> TensorRef:
        """DEQUANTIZE int8 to float32."""
        y = self._tensor(x.shape, TT.FLOAT32)
        self._op(OPS.DEQUANTIZE, [x.index], [y.index], ("DequantizeOptions", {}))
        return y
