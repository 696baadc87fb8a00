"""The C decoder of Vela's compressed weight stream against Vela's own codec (ethosu.mlw_codec)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tvmdevice_ethosu import _ethosu

mlw_codec = pytest.importorskip("ethosu.mlw_codec")


def decode(stream: bytes, capacity: int) -> tuple[int, np.ndarray]:
    out = np.zeros(capacity, np.int16)
    n = _ethosu.mlw_decode(np.frombuffer(stream, np.uint8), out)
    return n, out[:max(n, 0)]


def roundtrip(weights: list[int]) -> None:
    stream = bytes(mlw_codec.encode(weights))
    n, ours = decode(stream, len(weights) + 16)
    assert n == len(weights)
    assert ours.tolist() == list(mlw_codec.decode(bytearray(stream))) == weights


# 9-bit weights (int8 weights less their zero point), dense, sparse (zero runs) and few-valued (palettes)
_weight = st.integers(-255, 255)
_sparse = st.one_of(st.just(0), st.just(0), st.just(0), st.integers(-40, 40))
_few = st.sampled_from([-128, -7, 0, 3, 127])


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.lists(_weight, min_size=1, max_size=2000), st.lists(_sparse, min_size=1, max_size=3000),
                 st.lists(_few, min_size=1, max_size=3000)))
def test_random_weights_decode_as_vela_encoded_them(weights):
    roundtrip(weights)


def test_long_streams_of_several_slices():
    rng = np.random.default_rng(3)
    roundtrip(rng.integers(-255, 256, 70_000).tolist())  # beyond one slice (32768 weights)
    roundtrip([0] * 50_000 + [1])


def test_real_weights(models_dir):
    from tvmdevice.aot.frontend import load_model

    graph = load_model(models_dir / "kws_dscnn_int8.tflite")
    filters = [graph.tensors[op.inputs[1]] for op in graph.operators
               if op.type in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")]
    assert len(filters) == 10
    for t in filters:
        zero_point = int(t.quant.zero_point[0]) if t.quant is not None else 0
        roundtrip((t.data.astype(np.int32) - zero_point).ravel().tolist())


def test_a_truncated_stream_or_a_short_buffer_is_refused():
    weights = np.random.default_rng(1).integers(-255, 256, 500).tolist()
    stream = bytes(mlw_codec.encode(weights))
    assert decode(stream[: len(stream) // 2], 600)[0] == -1
    assert decode(stream, 499)[0] == -2
    assert decode(stream, 500)[0] == 500


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400), st.integers(0, 5000))
def test_random_bytes_never_crash_the_decoder(stream, capacity):
    n, _ = decode(stream, capacity)
    assert -2 <= n <= capacity


@settings(max_examples=60, deadline=None)
@given(st.lists(_sparse, min_size=1, max_size=3000), st.data())
def test_a_window_of_the_stream_decodes_as_that_slice(weights, data):
    # what one OFM block reads: the weights [skip, skip + n) of the stream, the decoder stopping there
    stream = np.frombuffer(bytes(mlw_codec.encode(weights)), np.uint8)
    skip = data.draw(st.integers(0, len(weights) + 2))
    n = data.draw(st.integers(0, len(weights) + 2))
    out = np.full(n, 999, np.int16)
    got = _ethosu.mlw_decode_window(stream, skip, out)
    end = min(skip + n, len(weights))
    assert got == min(skip + n, len(weights))
    assert out[:max(end - skip, 0)].tolist() == weights[skip:end]
