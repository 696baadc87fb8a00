"""Builder methods for the arithmetic, activation and reduction operators
(mixed into :class:`tvmdevice.aot.builder.ModelBuilder`).

Output quantization follows what the TFLite converter writes where the
kernel needs it (RELU6, MAXIMUM/MINIMUM and REDUCE_MAX keep the input's:
their int8 kernels do not rescale) and is otherwise a spread-preserving
guess unless given.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from tvmdevice.aot.builder._common import ACTIVATIONS, OPS, PADDINGS, TT, TensorRef, pair, scale_of

__all__ = ["ArithMixin"]


class ArithMixin:
    """Element-wise arithmetic, activations, reductions, TRANSPOSE_CONV and
    BATCH_MATMUL.  Relies on the builder's ``_tensor``, ``_activation_out``,
    ``_op``, ``_weights``, ``_bias``, ``_guess_scale`` and ``_rng``."""

    _tensor: Any
    _activation_out: Any
    _op: Any
    _weights: Any
    _bias: Any
    _guess_scale: Any
    _rng: np.random.Generator

    def _int8_like(self, x: TensorRef, shape: Sequence[int] | None = None) -> TensorRef:
        return self._tensor(x.shape if shape is None else shape, TT.INT8, scale_of(x), x.zero_point)

    def maximum(self, a: TensorRef, b: TensorRef) -> TensorRef:
        """MAXIMUM with broadcasting; the output keeps ``a``'s quantization (the raw values are compared)."""
        y = self._int8_like(a, np.broadcast_shapes(a.shape, b.shape))
        self._op(OPS.MAXIMUM, [a.index, b.index], [y.index], ("MaximumMinimumOptions", {}))
        return y

    def minimum(self, a: TensorRef, b: TensorRef) -> TensorRef:
        """MINIMUM with broadcasting; the output keeps ``a``'s quantization."""
        y = self._int8_like(a, np.broadcast_shapes(a.shape, b.shape))
        self._op(OPS.MINIMUM, [a.index, b.index], [y.index], ("MaximumMinimumOptions", {}))
        return y

    def squared_difference(self, a: TensorRef, b: TensorRef, out_scale: float | None = None,
                           out_zero_point: int | None = None) -> TensorRef:
        """SQUARED_DIFFERENCE with broadcasting."""
        shape = np.broadcast_shapes(a.shape, b.shape)
        guess = (scale_of(a) + scale_of(b)) ** 2 * 64.0
        y = self._activation_out(shape, out_scale, out_zero_point, guess, -128)
        self._op(OPS.SQUARED_DIFFERENCE, [a.index, b.index], [y.index], ("SquaredDifferenceOptions", {}))
        return y

    def _unary(self, code: int, x: TensorRef, out_scale: float | None, out_zero_point: int | None,
               default_zp: int, options: tuple[str, dict] | None = None) -> TensorRef:
        y = self._activation_out(x.shape, out_scale, out_zero_point, scale_of(x), default_zp)
        self._op(code, [x.index], [y.index], options)
        return y

    def relu(self, x: TensorRef, out_scale: float | None = None, out_zero_point: int | None = None) -> TensorRef:
        """RELU (rescaled to the output; by default the input's scale and zero point -128)."""
        return self._unary(OPS.RELU, x, out_scale, out_zero_point, -128)

    def relu_n1_to_1(self, x: TensorRef, out_scale: float | None = None,
                     out_zero_point: int | None = None) -> TensorRef:
        """RELU_N1_TO_1 (TFLM registers no kernel for it: tflite-micro refuses the model, LiteRT runs it)."""
        return self._unary(OPS.RELU_N1_TO_1, x, out_scale, out_zero_point, x.zero_point)

    def relu6(self, x: TensorRef) -> TensorRef:
        """RELU6; the int8 kernel clamps raw values, so the output keeps the input's quantization."""
        y = self._int8_like(x)
        self._op(OPS.RELU6, [x.index], [y.index])
        return y

    def leaky_relu(self, x: TensorRef, alpha: float = 0.2, out_scale: float | None = None,
                   out_zero_point: int | None = None) -> TensorRef:
        """LEAKY_RELU: ``x`` if ``x >= 0`` else ``alpha * x``."""
        return self._unary(OPS.LEAKY_RELU, x, out_scale, out_zero_point, x.zero_point,
                           ("LeakyReluOptions", {"Alpha": float(alpha)}))

    def hard_swish(self, x: TensorRef, out_scale: float | None = None, out_zero_point: int | None = None) -> TensorRef:
        """HARD_SWISH: ``x * relu6(x + 3) / 6``."""
        return self._unary(OPS.HARD_SWISH, x, out_scale, out_zero_point, x.zero_point, ("HardSwishOptions", {}))

    def prelu(self, x: TensorRef, alpha: np.ndarray | None = None, alpha_shape: Sequence[int] | None = None,
              alpha_scale: float = 1.0 / 256, alpha_zero_point: int = 0, out_scale: float | None = None,
              out_zero_point: int | None = None) -> TensorRef:
        """PRELU with a constant int8 alpha (random of ``alpha_shape``, by default one per channel)."""
        if alpha is None:
            shape = tuple(alpha_shape) if alpha_shape is not None else (x.shape[-1],)
            alpha = self._rng.integers(-128, 128, size=shape)
        a = self._tensor(np.shape(alpha), TT.INT8, alpha_scale, alpha_zero_point,
                         data=np.asarray(alpha).astype(np.int8))
        y = self._activation_out(x.shape, out_scale, out_zero_point, scale_of(x), x.zero_point)
        self._op(OPS.PRELU, [x.index, a.index], [y.index])
        return y

    def log_softmax(self, x: TensorRef) -> TensorRef:
        """LOG_SOFTMAX along the last axis; int8 output is always 16/256, 127."""
        y = self._tensor(x.shape, TT.INT8, 16.0 / 256, 127)
        self._op(OPS.LOG_SOFTMAX, [x.index], [y.index], ("LogSoftmaxOptions", {}))
        return y

    def _reduce(self, code: int, x: TensorRef, axes: Sequence[int], keep_dims: bool, scale: float,
                zero_point: int) -> TensorRef:
        rank = len(x.shape)
        resolved = {a + rank if a < 0 else a for a in axes}
        shape = [1 if k in resolved else d for k, d in enumerate(x.shape) if keep_dims or k not in resolved]
        a = self._tensor((len(axes),), TT.INT32, data=np.array(axes, dtype=np.int32))
        y = self._tensor(shape, TT.INT8, scale, zero_point)
        self._op(code, [x.index, a.index], [y.index], ("ReducerOptions", {"KeepDims": bool(keep_dims)}))
        return y

    def sum(self, x: TensorRef, axes: Sequence[int], keep_dims: bool = True, out_scale: float | None = None,
            out_zero_point: int | None = None) -> TensorRef:
        """SUM over ``axes``; the output scale defaults to the input's times the root of the count."""
        rank = len(x.shape)
        count = int(np.prod([x.shape[a + rank if a < 0 else a] for a in set(axes)]))
        scale = out_scale if out_scale is not None else scale_of(x) * max(1.0, math.sqrt(count)) * 2
        return self._reduce(OPS.SUM, x, axes, keep_dims, scale, out_zero_point if out_zero_point is not None else 0)

    def reduce_max(self, x: TensorRef, axes: Sequence[int], keep_dims: bool = True) -> TensorRef:
        """REDUCE_MAX over ``axes``; the output keeps the input's quantization (TFLM requires it)."""
        return self._reduce(OPS.REDUCE_MAX, x, axes, keep_dims, scale_of(x), x.zero_point)

    def _arg(self, code: int, table: str, x: TensorRef, axis: int) -> TensorRef:
        rank = len(x.shape)
        ax = axis + rank if axis < 0 else axis
        a = self._tensor((1,), TT.INT32, data=np.array([axis], dtype=np.int32))
        y = self._tensor([d for k, d in enumerate(x.shape) if k != ax], TT.INT32)
        self._op(code, [x.index, a.index], [y.index], (table, {"OutputType": TT.INT32}))
        return y

    def arg_max(self, x: TensorRef, axis: int = -1) -> TensorRef:
        """ARG_MAX along ``axis``: int32 indices."""
        return self._arg(OPS.ARG_MAX, "ArgMaxOptions", x, axis)

    def arg_min(self, x: TensorRef, axis: int = -1) -> TensorRef:
        """ARG_MIN along ``axis``: int32 indices."""
        return self._arg(OPS.ARG_MIN, "ArgMinOptions", x, axis)

    def transpose_conv(self, x: TensorRef, filters: int, kernel: int | Sequence[int] = (3, 3),
                       stride: int | Sequence[int] = 2, padding: str = "SAME", activation: str = "NONE",
                       per_channel: bool = True, bias: bool = True, out_scale: float | None = None,
                       out_zero_point: int | None = None, weight_scale: float | None = None) -> TensorRef:
        """TRANSPOSE_CONV with OHWI weights ``[filters, KH, KW, C]``; ``x`` is NHWC.

        The output is ``H * stride`` (SAME) or ``(H - 1) * stride + KH`` (VALID) high.
        """
        (kh, kw), (sh, sw) = pair(kernel), pair(stride)
        n, h, w, c = x.shape
        oh, ow = (h * sh, w * sw) if padding == "SAME" else ((h - 1) * sh + kh, (w - 1) * sw + kw)
        shape = (n, oh, ow, filters)
        out_shape = self._tensor((4,), TT.INT32, data=np.array(shape, dtype=np.int32))
        wt, w_scales = self._weights((filters, kh, kw, c), filters, per_channel, 0, weight_scale)
        # Each output sums about kh * kw * c / (stride_h * stride_w) taps.
        depth = max(1, kh * kw * c // (sh * sw))
        ins = [out_shape.index, wt.index, x.index]
        if bias:
            ins.append(self._bias(filters, scale_of(x), w_scales, depth).index)
        y = self._activation_out(shape, out_scale, out_zero_point,
                                 self._guess_scale(scale_of(x), float(w_scales.mean()), depth))
        self._op(OPS.TRANSPOSE_CONV, ins, [y.index], ("TransposeConvOptions", {
            "Padding": PADDINGS[padding], "StrideW": sw, "StrideH": sh,
            "FusedActivationFunction": ACTIVATIONS[activation]}))
        return y

    def batch_matmul(self, a: TensorRef, b: TensorRef, adj_x: bool = False, adj_y: bool = False,
                     out_scale: float | None = None, out_zero_point: int | None = None) -> TensorRef:
        """BATCH_MATMUL of two int8 tensors (``b`` may be a :meth:`constant`); batch dimensions broadcast."""
        rank = max(len(a.shape), len(b.shape))
        ash = (1,) * (rank - len(a.shape)) + tuple(a.shape)
        bsh = (1,) * (rank - len(b.shape)) + tuple(b.shape)
        rows, depth = (ash[-1], ash[-2]) if adj_x else (ash[-2], ash[-1])
        cols = bsh[-2] if adj_y else bsh[-1]
        shape = tuple(np.broadcast_shapes(ash[:-2], bsh[:-2])) + (rows, cols)
        guess = self._guess_scale(scale_of(a), scale_of(b), depth)
        y = self._activation_out(shape, out_scale, out_zero_point, guess)
        self._op(OPS.BATCH_MATMUL, [a.index, b.index], [y.index],
                 ("BatchMatMulOptions", {"AdjX": bool(adj_x), "AdjY": bool(adj_y)}))
        return y
