"""The models of the arithmetic and activation operator tests: one builder case per
operator and option combination, each a function of a seed returning TFLite bytes."""

from __future__ import annotations

from typing import Callable

import numpy as np

from tvmdevice.aot.builder import ModelBuilder

Case = Callable[[int], bytes]


def _binary(method: str, s1, s2, q1=(0.05, 0), q2=(0.05, 0), const2: bool = False, **kw) -> Case:
    def make(seed: int) -> bytes:
        b = ModelBuilder(name=method, seed=seed)
        x = b.input(s1, *q1)
        if const2:
            y = b.constant(np.random.default_rng(seed + 7).integers(-128, 128, size=s2), *q2)
        else:
            y = b.input(s2, *q2)
        b.output(getattr(b, method)(x, y, **kw))
        return b.build()
    return make


def _unary(method: str, shape, q=(0.05, 0), **kw) -> Case:
    def make(seed: int) -> bytes:
        b = ModelBuilder(name=method, seed=seed)
        b.output(getattr(b, method)(b.input(shape, *q), **kw))
        return b.build()
    return make


def _matmul(s1, s2, const2: bool = False, q1=(0.05, 3), q2=(0.04, -2), **kw) -> Case:
    return _binary("batch_matmul", s1, s2, q1, q2, const2=const2, **kw)


#: id -> model maker, for every operator and option combination.
CASES: dict[str, Case] = {
    # MAXIMUM / MINIMUM: same shapes, broadcasting up to 5-D, a constant operand
    "maximum-same": _binary("maximum", (1, 4, 4, 3), (1, 4, 4, 3)),
    "maximum-broadcast-4d": _binary("maximum", (1, 4, 4, 3), (1, 1, 1, 3)),
    "maximum-broadcast-5d": _binary("maximum", (2, 1, 3, 1, 4), (1, 2, 1, 5, 1)),
    "maximum-const": _binary("maximum", (2, 7), (7,), const2=True),
    "minimum-same": _binary("minimum", (3, 5), (3, 5), q1=(0.02, -7), q2=(0.02, -7)),
    "minimum-broadcast": _binary("minimum", (1, 3, 1, 2), (4, 1, 5, 2)),
    "minimum-const": _binary("minimum", (1, 4, 4, 3), (3,), const2=True),
    # SQUARED_DIFFERENCE: scales and zero points, broadcasting up to 4-D
    "squared_difference-same": _binary("squared_difference", (1, 4, 4, 3), (1, 4, 4, 3)),
    "squared_difference-scales": _binary("squared_difference", (2, 9), (2, 9), q1=(0.1, 5), q2=(0.03, -20),
                                         out_scale=0.4, out_zero_point=-100),
    "squared_difference-broadcast": _binary("squared_difference", (1, 4, 1, 3), (2, 1, 5, 3), q1=(0.05, -3),
                                            q2=(0.07, 4)),
    "squared_difference-5d-same": _binary("squared_difference", (1, 2, 2, 2, 3), (1, 2, 2, 2, 3)),
    # RELU family
    "relu-same-scale": _unary("relu", (2, 33), q=(0.05, 10)),
    "relu-rescale": _unary("relu", (1, 4, 4, 3), q=(0.1, -5), out_scale=0.03, out_zero_point=-128),
    "relu-output-zp-negative": _unary("relu", (40,), q=(0.02, 3), out_scale=0.05, out_zero_point=-20),
    "relu-output-zp-positive": _unary("relu", (40,), q=(0.02, -30), out_scale=0.01, out_zero_point=17),
    "relu6": _unary("relu6", (1, 8, 8, 2), q=(0.05, -10)),
    "relu6-saturating-six": _unary("relu6", (64,), q=(0.01, 0)),
    "relu6-large-scale": _unary("relu6", (64,), q=(0.2, -100)),
    "leaky_relu-0.2": _unary("leaky_relu", (1, 4, 4, 3), q=(0.05, 3), alpha=0.2),
    "leaky_relu-rescale": _unary("leaky_relu", (64,), q=(0.05, -12), alpha=0.1, out_scale=0.02, out_zero_point=5),
    "leaky_relu-alpha-above-1": _unary("leaky_relu", (64,), q=(0.03, 0), alpha=1.7, out_scale=0.06),
    "leaky_relu-negative-alpha": _unary("leaky_relu", (64,), q=(0.05, 20), alpha=-0.4),
    "leaky_relu-alpha-0": _unary("leaky_relu", (64,), q=(0.05, 0), alpha=0.0),
    "hard_swish": _unary("hard_swish", (1, 4, 4, 3), q=(0.05, 0)),
    "hard_swish-wide": _unary("hard_swish", (128,), q=(0.1, -30), out_scale=0.05, out_zero_point=-90),
    "hard_swish-narrow": _unary("hard_swish", (128,), q=(0.01, 20), out_scale=0.004, out_zero_point=-100),
    "hard_swish-left-shift": _unary("hard_swish", (128,), q=(0.5, 0), out_scale=0.3, out_zero_point=-60),
    "prelu-per-channel": _unary("prelu", (1, 4, 4, 3), q=(0.05, 4)),
    "prelu-alpha-zp": _unary("prelu", (1, 4, 4, 3), q=(0.05, -4), alpha_shape=(1, 1, 3), alpha_scale=0.01,
                             alpha_zero_point=-20, out_scale=0.04, out_zero_point=-6),
    "prelu-full-alpha": _unary("prelu", (2, 5, 3), q=(0.02, 0), alpha_shape=(2, 5, 3)),
    "prelu-2d": _unary("prelu", (6, 8), q=(0.05, 10), alpha_shape=(8,), alpha_scale=0.004),
    # reductions
    "sum-hw": _unary("sum", (1, 4, 4, 3), q=(0.05, 2), axes=[1, 2]),
    "sum-last-no-keep": _unary("sum", (3, 10), q=(0.05, -3), axes=[-1], keep_dims=False),
    "sum-5d": _unary("sum", (1, 2, 3, 4, 5), q=(0.02, 1), axes=[0, 3], keep_dims=False, out_scale=0.1,
                     out_zero_point=-4),
    "sum-duplicate-axis": _unary("sum", (4, 6), q=(0.05, 0), axes=[1, -1]),
    "reduce_max-hw": _unary("reduce_max", (1, 4, 4, 3), q=(0.05, -9), axes=[1, 2]),
    "reduce_max-three-axes": _unary("reduce_max", (2, 3, 4, 5), q=(0.05, 0), axes=[0, 2, 3], keep_dims=False),
    "reduce_max-last": _unary("reduce_max", (7, 9), q=(0.05, 0), axes=[-1], keep_dims=False),
    "arg_max-last": _unary("arg_max", (3, 10)),
    "arg_max-axis0": _unary("arg_max", (6, 2, 3), axis=0),
    "arg_max-1d": _unary("arg_max", (17,)),
    "arg_min-middle": _unary("arg_min", (2, 5, 4), axis=1),
    "arg_min-last": _unary("arg_min", (1, 4, 4, 3), axis=-1),
    # LOG_SOFTMAX (output 16/256, 127)
    "log_softmax-row": _unary("log_softmax", (1, 10), q=(0.1, 0)),
    "log_softmax-rows": _unary("log_softmax", (3, 4, 33), q=(0.05, -20)),
    "log_softmax-small-scale": _unary("log_softmax", (2, 100), q=(0.01, 5)),
    "log_softmax-large-scale": _unary("log_softmax", (2, 16), q=(0.5, 3)),
    # TRANSPOSE_CONV
    "transpose_conv-same-s2": _unary("transpose_conv", (1, 4, 4, 3), q=(0.05, 2), filters=4, kernel=3, stride=2),
    "transpose_conv-valid-s2": _unary("transpose_conv", (1, 3, 5, 2), q=(0.05, -6), filters=3, kernel=(3, 2),
                                      stride=2, padding="VALID"),
    "transpose_conv-same-s1": _unary("transpose_conv", (1, 5, 5, 4), filters=2, kernel=3, stride=1),
    "transpose_conv-s3-no-bias": _unary("transpose_conv", (2, 3, 3, 2), filters=5, kernel=4, stride=3, bias=False),
    "transpose_conv-per-tensor": _unary("transpose_conv", (1, 4, 4, 3), filters=4, kernel=2, stride=2,
                                        per_channel=False),
    "transpose_conv-strides-hw": _unary("transpose_conv", (1, 3, 4, 2), filters=3, kernel=(2, 3), stride=(1, 2)),
    # BATCH_MATMUL
    "batch_matmul-2d": _matmul((4, 6), (6, 5)),
    "batch_matmul-3d": _matmul((2, 4, 6), (2, 6, 5)),
    "batch_matmul-broadcast": _matmul((3, 1, 4, 6), (2, 6, 5)),
    "batch_matmul-adj-x": _matmul((2, 6, 4), (2, 6, 5), adj_x=True),
    "batch_matmul-adj-y": _matmul((2, 4, 6), (1, 5, 6), adj_y=True),
    "batch_matmul-adj-both": _matmul((6, 4), (5, 6), adj_x=True, adj_y=True),
    "batch_matmul-const-rhs": _matmul((1, 3, 8), (8, 4), const2=True),
    "batch_matmul-5d": _matmul((1, 2, 1, 3, 4), (2, 1, 2, 4, 3)),
}

#: Operator -> its cases' ids.
BY_OPERATOR: dict[str, list[str]] = {}
for _key in CASES:
    BY_OPERATOR.setdefault(_key.split("-")[0].upper(), []).append(_key)


def elementwise_chain(seed: int = 0) -> bytes:
    """Every arithmetic element-wise operator in one model (two inputs, broadcasting)."""
    b = ModelBuilder(name="arith_elementwise", seed=seed)
    x = b.input((1, 4, 4, 3), 0.05, 2)
    y = b.input((1, 1, 1, 3), 0.05, 2)
    hi, lo = b.maximum(x, y), b.minimum(x, y)
    d = b.squared_difference(hi, lo, out_scale=0.02, out_zero_point=-128)
    r = b.relu(b.leaky_relu(lo, alpha=0.3), out_scale=0.03, out_zero_point=-128)
    s = b.hard_swish(b.relu6(hi), out_scale=0.04, out_zero_point=-100)
    b.output(b.prelu(b.maximum(b.minimum(d, r), s), alpha_scale=0.01))
    return b.build()


def reductions(seed: int = 0) -> bytes:
    """SUM, REDUCE_MAX, ARG_MAX and ARG_MIN of one input."""
    b = ModelBuilder(name="arith_reduce", seed=seed)
    x = b.input((2, 5, 4, 3), 0.05, -3)
    b.output(b.sum(x, axes=[1, 2], keep_dims=False))
    b.output(b.reduce_max(x, axes=[0, 3]))
    b.output(b.arg_max(x, axis=1))
    b.output(b.arg_min(x, axis=-1))
    b.output(b.log_softmax(x))
    return b.build()


def matmul_and_transpose_conv(seed: int = 0) -> bytes:
    """TRANSPOSE_CONV into BATCH_MATMUL (a constant rhs) and one of two inputs."""
    b = ModelBuilder(name="arith_matmul", seed=seed)
    x = b.input((1, 3, 3, 4), 0.05, 1)
    t = b.transpose_conv(x, filters=5, kernel=3, stride=2, out_scale=0.1, out_zero_point=-3)  # [1, 6, 6, 5]
    rhs = b.constant(np.random.default_rng(seed).integers(-128, 128, size=(5, 7)), 0.02, 0)
    m = b.batch_matmul(t, rhs, out_scale=0.2)                                                 # [1, 6, 6, 7]
    z = b.input((1, 6, 5, 7), 0.04, -5)
    b.output(b.batch_matmul(m, z, adj_y=True, out_scale=0.5))                                  # [1, 6, 6, 5]
    return b.build()


#: Models that chain the operators, for the export tests.
CHAINS = {"elementwise": elementwise_chain, "reductions": reductions, "matmul": matmul_and_transpose_conv}
