"""A small fluent API that writes real int8 TFLite models.

::

    b = ModelBuilder(seed=0)
    x = b.input((1, 16, 16, 1), scale=0.05, zero_point=-10)
    y = b.conv2d(x, filters=8, kernel=(3, 3), activation="RELU")
    b.output(b.softmax(b.fully_connected(b.reshape(y, (1, -1)), 10)))
    model = b.build()  # bytes of a .tflite file

Weights are drawn from a seeded numpy generator with the usual int8
quantization: symmetric weights (zero point 0) with per-channel scales,
int32 biases with scale ``input_scale * weight_scale``.  An int16 input makes
the converter's int16x8 layers: int16 activations with zero point 0, int8
weights, int64 biases; every operator's output takes its input's type.  Output scales that
are not given are estimated so values spread over the int8 range instead of
saturating.  Operator options mirror the IR's option names.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from tvmdevice.aot.builder._arith import ArithMixin
from tvmdevice.aot.builder._common import (
    ACTIVATIONS,
    INT8_STD,
    NUMPY_TYPES,
    OPS,
    PADDINGS,
    QMAX,
    QUANT_STD,
    TT,
    TensorRef,
    out_size,
    pair,
    scale_of,
    ttype_of,
)
from tvmdevice.aot.builder._flatbuffer import ModelSpec, OperatorSpec, TensorSpec, serialize
from tvmdevice.aot.builder._layers import LayersMixin
from tvmdevice.aot.builder._recurrent import RecurrentMixin
from tvmdevice.aot.builder._shape_layers import ShapeMixin

__all__ = ["ModelBuilder", "TensorRef"]


class ModelBuilder(LayersMixin, ShapeMixin, ArithMixin, RecurrentMixin):
    """Builds one single-subgraph int8 TFLite model, operator by operator.

    Convolutions and dense layers are defined here; pooling, element-wise,
    shape and quantization operators come from :class:`LayersMixin`; the
    arithmetic, activation and reduction operators from :class:`ArithMixin`.
    """

    def __init__(self, name: str = "main", seed: int = 0, rng: np.random.Generator | None = None) -> None:
        self._spec = ModelSpec(name=name)
        self._rng = rng if rng is not None else np.random.default_rng(seed)

    @property
    def spec(self) -> ModelSpec:
        """The model description being built (mutable: tools and tests may
        bend it before :meth:`build`, e.g. to write a deliberately broken file)."""
        return self._spec

    def build(self) -> bytes:
        """The model as TFLite flatbuffer bytes.

        :raises ValueError: when no output was marked.
        """
        if not self._spec.outputs:
            raise ValueError("mark at least one output with .output(tensor) before build()")
        return serialize(self._spec)

    # -- tensors -----------------------------------------------------------
    def _tensor(self, shape: Sequence[int], ttype: int, scale: float | Sequence[float] | np.ndarray | None = None,
                zero_point: int | Sequence[int] = 0, data: np.ndarray | None = None, axis: int = 0,
                name: str | None = None) -> TensorRef:
        buffer = 0
        if data is not None:
            self._spec.buffers.append(np.ascontiguousarray(data, dtype=NUMPY_TYPES[ttype]).astype(
                np.dtype(NUMPY_TYPES[ttype]).newbyteorder("<")).tobytes())
            buffer = len(self._spec.buffers) - 1
        scales: list[float] | None = None
        zps: list[int] | None = None
        if scale is not None:
            scales = [float(s) for s in np.atleast_1d(scale)]
            zps = [int(z) for z in np.broadcast_to(zero_point, (len(scales),))]
        index = len(self._spec.tensors)
        self._spec.tensors.append(TensorSpec(name or f"t{index}", tuple(int(d) for d in shape), ttype, buffer,
                                             scales, zps, axis))
        return TensorRef(index, tuple(int(d) for d in shape), NUMPY_TYPES[ttype],
                         None if scales is None else scales[0], 0 if zps is None else zps[0])

    def input(self, shape: Sequence[int], scale: float = 0.05, zero_point: int = 0,
              dtype: str = "int8") -> TensorRef:
        """A graph input: int8 or int16 with the given quantization, or float32."""
        if dtype not in ("int8", "int16", "float32"):
            raise ValueError(f"input dtype must be 'int8', 'int16' or 'float32', not {dtype!r}")
        if dtype == "float32":
            t = self._tensor(shape, TT.FLOAT32)
        else:
            t = self._tensor(shape, TT.INT16 if dtype == "int16" else TT.INT8, scale, zero_point)
        self._spec.inputs.append(t.index)
        return t

    def constant(self, values: np.ndarray, scale: float, zero_point: int = 0, dtype: str = "int8") -> TensorRef:
        """An int8 (or int16) constant tensor (e.g. the second operand of ADD)."""
        values = np.asarray(values)
        ttype = TT.INT16 if dtype == "int16" else TT.INT8
        return self._tensor(values.shape, ttype, scale, zero_point, data=values.astype(NUMPY_TYPES[ttype]))

    def output(self, t: TensorRef) -> TensorRef:
        """Mark ``t`` as a graph output."""
        self._spec.outputs.append(t.index)
        return t

    def _activation_out(self, shape: Sequence[int], scale: float | None, zero_point: int | None,
                        default_scale: float, default_zp: int = 0, ttype: int = TT.INT8) -> TensorRef:
        return self._tensor(shape, ttype, scale if scale is not None else default_scale,
                            zero_point if zero_point is not None else default_zp)

    def _op(self, code: int, inputs: Sequence[int], outputs: Sequence[int],
            options: tuple[str, dict] | None = None) -> None:
        self._spec.operators.append(OperatorSpec(code, tuple(inputs), tuple(outputs), options))

    def _weights(self, shape: Sequence[int], channels: int, per_channel: bool, axis: int,
                 weight_scale: float | None) -> tuple[TensorRef, np.ndarray]:
        base = weight_scale if weight_scale is not None else 0.5 / 127
        if per_channel:
            scales = (base * self._rng.uniform(0.5, 1.5, size=channels)).astype(np.float32)
        else:
            scales = np.full(1, base, dtype=np.float32)
        w = self._rng.integers(-127, 128, size=shape, dtype=np.int64).astype(np.int8)
        ref = self._tensor(shape, TT.INT8, scales if per_channel else float(scales[0]), 0, data=w, axis=axis)
        return ref, np.broadcast_to(scales, (channels,)).astype(np.float64)

    def _bias(self, channels: int, in_scale: float, w_scales: np.ndarray, depth: int,
              ttype: int = TT.INT8) -> TensorRef:
        b_scales = (np.float32(in_scale) * w_scales.astype(np.float32)).astype(np.float32)
        # Biases of about one accumulator standard deviation; int64 for int16 activations.
        spread = int(max(1, math.sqrt(depth) * QUANT_STD[ttype] * 64))
        bias_type = TT.INT64 if ttype == TT.INT16 else TT.INT32
        values = self._rng.integers(-spread, spread + 1, size=channels).astype(NUMPY_TYPES[bias_type])
        return self._tensor((channels,), bias_type, b_scales, 0, data=values)

    def _guess_scale(self, in_scale: float, w_scale: float, depth: int, ttype: int = TT.INT8) -> float:
        # std of sum over depth of (x - zp) * w, in real units; +-3 sigma over the output type.
        sigma = in_scale * w_scale * math.sqrt(max(depth, 1)) * QUANT_STD[ttype] * INT8_STD
        return 3.0 * sigma / QMAX[ttype]

    # -- convolutions and dense -------------------------------------------
    def conv2d(self, x: TensorRef, filters: int, kernel: int | Sequence[int] = (3, 3),
               stride: int | Sequence[int] = 1, padding: str = "SAME", dilation: int | Sequence[int] = 1,
               activation: str = "NONE", per_channel: bool = True, bias: bool = True,
               out_scale: float | None = None, out_zero_point: int | None = None,
               weight_scale: float | None = None, groups: int = 1) -> TensorRef:
        """CONV_2D with OHWI weights; ``x`` is NHWC.  ``groups > 1`` makes a
        grouped convolution (weights [filters, KH, KW, C / groups])."""
        (kh, kw), (sh, sw), (dh, dw) = pair(kernel), pair(stride), pair(dilation)
        n, h, w, c = x.shape
        if c % groups or filters % groups:
            raise ValueError(f"{groups} groups must divide {c} input channels and {filters} filters")
        depth = kh * kw * (c // groups)
        tt = ttype_of(x)
        wt, w_scales = self._weights((filters, kh, kw, c // groups), filters, per_channel, 0, weight_scale)
        ins = [x.index, wt.index]
        if bias:
            ins.append(self._bias(filters, scale_of(x), w_scales, depth, tt).index)
        shape = (n, out_size(padding, h, kh, sh, dh), out_size(padding, w, kw, sw, dw), filters)
        y = self._activation_out(shape, out_scale, out_zero_point,
                                 self._guess_scale(scale_of(x), float(w_scales.mean()), depth, tt), ttype=tt)
        self._op(OPS.CONV_2D, ins, [y.index], ("Conv2DOptions", {
            "Padding": PADDINGS[padding], "StrideW": sw, "StrideH": sh,
            "FusedActivationFunction": ACTIVATIONS[activation], "DilationWFactor": dw, "DilationHFactor": dh}))
        return y

    def depthwise_conv2d(self, x: TensorRef, kernel: int | Sequence[int] = (3, 3), depth_multiplier: int = 1,
                         stride: int | Sequence[int] = 1, padding: str = "SAME",
                         dilation: int | Sequence[int] = 1, activation: str = "NONE", per_channel: bool = True,
                         bias: bool = True, out_scale: float | None = None, out_zero_point: int | None = None,
                         weight_scale: float | None = None) -> TensorRef:
        """DEPTHWISE_CONV_2D with [1, KH, KW, C*M] weights."""
        (kh, kw), (sh, sw), (dh, dw) = pair(kernel), pair(stride), pair(dilation)
        n, h, w, c = x.shape
        oc = c * depth_multiplier
        tt = ttype_of(x)
        wt, w_scales = self._weights((1, kh, kw, oc), oc, per_channel, 3, weight_scale)
        ins = [x.index, wt.index]
        if bias:
            ins.append(self._bias(oc, scale_of(x), w_scales, kh * kw, tt).index)
        shape = (n, out_size(padding, h, kh, sh, dh), out_size(padding, w, kw, sw, dw), oc)
        y = self._activation_out(shape, out_scale, out_zero_point,
                                 self._guess_scale(scale_of(x), float(w_scales.mean()), kh * kw, tt), ttype=tt)
        self._op(OPS.DEPTHWISE_CONV_2D, ins, [y.index], ("DepthwiseConv2DOptions", {
            "Padding": PADDINGS[padding], "StrideW": sw, "StrideH": sh, "DepthMultiplier": depth_multiplier,
            "FusedActivationFunction": ACTIVATIONS[activation], "DilationWFactor": dw, "DilationHFactor": dh}))
        return y

    def fully_connected(self, x: TensorRef, units: int, activation: str = "NONE", per_channel: bool = False,
                        bias: bool = True, keep_num_dims: bool = False, out_scale: float | None = None,
                        out_zero_point: int | None = None, weight_scale: float | None = None) -> TensorRef:
        """FULLY_CONNECTED over the last dimension of ``x`` (other dimensions are batches)."""
        depth = x.shape[-1]
        batches = int(np.prod(x.shape[:-1], dtype=np.int64))
        tt = ttype_of(x)
        wt, w_scales = self._weights((units, depth), units, per_channel, 0, weight_scale)
        ins = [x.index, wt.index]
        if bias:
            ins.append(self._bias(units, scale_of(x), w_scales, depth, tt).index)
        shape = tuple(x.shape[:-1]) + (units,) if keep_num_dims else (batches, units)
        y = self._activation_out(shape, out_scale, out_zero_point,
                                 self._guess_scale(scale_of(x), float(w_scales.mean()), depth, tt), ttype=tt)
        self._op(OPS.FULLY_CONNECTED, ins, [y.index], ("FullyConnectedOptions", {
            "FusedActivationFunction": ACTIVATIONS[activation], "KeepNumDims": bool(keep_num_dims)}))
        return y
