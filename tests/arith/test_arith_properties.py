"""Property tests of the arithmetic and activation operators on the host device ``c``: random shapes, quantization and
options drawn by hypothesis, every output bit-exact with tflite-micro."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.errors import PlacementError
from tvmdevice.testing.oracle import tflm_run

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scales = st.sampled_from([0.003, 0.01, 0.02, 0.05, 0.1, 0.37])
zero_points = st.integers(-128, 127)
dims = st.integers(1, 5)


def _check(model: bytes, seed: int) -> None:
    module = tvmdevice.compile(model, "c")
    rng = np.random.default_rng(seed)
    inputs = [rng.integers(-128, 128, size=module.graph.tensors[t].shape, dtype=np.int8) for t in module.graph.inputs]
    with module.executor() as ex:
        ours = ex.run(inputs)
    ref = tflm_run(model, inputs)
    for k, a in enumerate(ours):
        np.testing.assert_array_equal(a, ref.output(k).reshape(a.shape))


@st.composite
def broadcast_pair(draw, max_rank: int = 4):
    rank = draw(st.integers(1, max_rank))
    out = [draw(dims) for _ in range(rank)]
    a = [d if draw(st.booleans()) else 1 for d in out]
    b = [d if draw(st.booleans()) else 1 for d in out]
    return tuple(a), tuple(b[draw(st.integers(0, rank - 1)):])


@SETTINGS
@given(pair=broadcast_pair(), op=st.sampled_from(["maximum", "minimum", "squared_difference"]), s1=scales,
       z1=zero_points, s2=scales, z2=zero_points, seed=st.integers(0, 99))
def test_binary_operators(pair, op, s1, z1, s2, z2, seed):
    b = ModelBuilder(seed=seed)
    x, y = b.input(pair[0], s1, z1), b.input(pair[1], s2, z2)
    b.output(getattr(b, op)(x, y))
    _check(b.build(), seed)


@SETTINGS
@given(op=st.sampled_from(["relu", "leaky_relu", "hard_swish", "prelu", "relu6"]), s_in=scales, z_in=zero_points,
       s_out=scales, z_out=zero_points, alpha=st.floats(-2.0, 2.0, width=32), seed=st.integers(0, 99))
def test_activations(op, s_in, z_in, s_out, z_out, alpha, seed):
    b = ModelBuilder(seed=seed)
    x = b.input((3, 40), s_in, z_in)
    if op == "relu6":
        y = b.relu6(x)
    elif op == "leaky_relu":
        y = b.leaky_relu(x, alpha=alpha, out_scale=s_out, out_zero_point=z_out)
    elif op == "prelu":
        y = b.prelu(x, alpha_scale=abs(alpha) / 64 + 1e-3, out_scale=s_out, out_zero_point=z_out)
    else:
        y = getattr(b, op)(x, out_scale=s_out, out_zero_point=z_out)
    b.output(y)
    try:
        _check(b.build(), seed)
    except PlacementError as e:  # HARD_SWISH refuses an output exponent above 0, as TFLM's Prepare does
        assert op == "hard_swish" and "exponent" in str(e)


@SETTINGS
@given(shape=st.lists(dims, min_size=1, max_size=5), data=st.data(), keep=st.booleans(),
       op=st.sampled_from(["sum", "reduce_max", "arg_max", "arg_min"]), s=scales, z=zero_points,
       seed=st.integers(0, 99))
def test_reductions(shape, data, keep, op, s, z, seed):
    rank = len(shape)
    b = ModelBuilder(seed=seed)
    x = b.input(tuple(shape), s, z)
    if op in ("arg_max", "arg_min"):
        y = getattr(b, op)(x, axis=data.draw(st.integers(-rank, rank - 1)))
    else:
        most = 2 if op == "sum" else rank
        axes = data.draw(st.lists(st.integers(-rank, rank - 1), min_size=1, max_size=most, unique=True))
        if op == "sum" and len({a % rank for a in axes}) > 2:
            return
        y = getattr(b, op)(x, axes=axes, keep_dims=keep)
    b.output(y)
    _check(b.build(), seed)


@SETTINGS
@given(h=st.integers(1, 5), w=st.integers(1, 5), cin=st.integers(1, 4), cout=st.integers(1, 5),
       kh=st.integers(1, 4), kw=st.integers(1, 4), sh=st.integers(1, 3), sw=st.integers(1, 3),
       padding=st.sampled_from(["SAME", "VALID"]), bias=st.booleans(), per_channel=st.booleans(),
       seed=st.integers(0, 99))
def test_transpose_conv(h, w, cin, cout, kh, kw, sh, sw, padding, bias, per_channel, seed):
    b = ModelBuilder(seed=seed)
    x = b.input((1, h, w, cin), 0.05, seed - 50)
    b.output(b.transpose_conv(x, cout, kernel=(kh, kw), stride=(sh, sw), padding=padding, bias=bias,
                              per_channel=per_channel))
    _check(b.build(), seed)


@SETTINGS
@given(batch_l=st.lists(st.integers(1, 3), max_size=3), batch_r=st.lists(st.integers(1, 3), max_size=3),
       rows=st.integers(1, 6), cols=st.integers(1, 6), depth=st.integers(1, 9), adj_x=st.booleans(),
       adj_y=st.booleans(), z1=zero_points, z2=zero_points, seed=st.integers(0, 99))
def test_batch_matmul(batch_l, batch_r, rows, cols, depth, adj_x, adj_y, z1, z2, seed):
    n = min(len(batch_l), len(batch_r))
    # broadcast-compatible batches: where both have a dimension, one of them is 1 or they agree
    pairs = zip(batch_l[len(batch_l) - n:], batch_r[len(batch_r) - n:])
    batch_r = [right if right == left or 1 in (right, left) else 1 for left, right in pairs]
    lhs = (*batch_l, *((depth, rows) if adj_x else (rows, depth)))
    rhs = (*batch_r, *((cols, depth) if adj_y else (depth, cols)))
    b = ModelBuilder(seed=seed)
    b.output(b.batch_matmul(b.input(lhs, 0.05, z1), b.input(rhs, 0.04, z2), adj_x=adj_x, adj_y=adj_y))
    _check(b.build(), seed)
