"""int16x8 convolutions (16-bit feature maps, 8-bit weights, 64-bit biases) on the functional model:
CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED bit-exact with tflite-micro on inputs over the whole
int16 range and on small ones."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_int16 import run_and_compare
from test_stream import _vela
from tvmdevice.aot.builder import single_op_model
from tvmdevice.aot.frontend.tflite import load_tflite

from tvmdevice_ethosu import _ethosu
from tvmdevice_ethosu.device import DEVICE_TYPE
from tvmdevice_ethosu.placement import command_name, stream_refusal
from tvmdevice_ethosu.vela_compile import compile_raw

_SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_scale = st.sampled_from([0.0005, 0.003, 0.05, 1.0])
#: the output scale against the input's (None: the builder's guess from the accumulator's spread)
_out = st.sampled_from([None, 0.002, 0.05, 1.0])
_activation = st.sampled_from(["NONE", "RELU", "RELU6"])


def _out_scale(scale: float, factor: float | None) -> float | None:
    return None if factor is None else scale * factor


def _fits(h: int, w: int, kernel, dilation: int, padding: str) -> bool:
    return padding == "SAME" or (h >= (kernel[0] - 1) * dilation + 1 and w >= (kernel[1] - 1) * dilation + 1)


@_SETTINGS
@given(h=st.integers(2, 9), w=st.integers(2, 9), c=st.sampled_from([1, 3, 16, 17, 40]),
       filters=st.sampled_from([1, 5, 16, 20]), kernel=st.sampled_from([(1, 1), (3, 3), (2, 3), (5, 5)]),
       stride=st.sampled_from([1, 2, 3]), padding=st.sampled_from(["SAME", "VALID"]), activation=_activation,
       scale=_scale, out=_out, seed=st.integers(0, 99))
def test_int16_conv_2d_is_bit_exact(registry, h, w, c, filters, kernel, stride, padding, activation, scale, out, seed):
    if not _fits(h, w, kernel, 1, padding):
        return
    model = single_op_model("CONV_2D", (1, h, w, c), input_dtype="int16", input_scale=scale, filters=filters,
                            kernel=kernel, stride=stride, padding=padding, activation=activation,
                            out_scale=_out_scale(scale, out), seed=seed)
    assert run_and_compare(registry, model, seed) == "ethos-u"


@_SETTINGS
@given(h=st.integers(2, 9), w=st.integers(2, 9), c=st.sampled_from([1, 4, 16, 24, 33]),
       kernel=st.sampled_from([(3, 3), (1, 1), (3, 2), (5, 5)]), stride=st.sampled_from([1, 2]),
       dilation=st.sampled_from([1, 2]), padding=st.sampled_from(["SAME", "VALID"]), activation=_activation,
       scale=_scale, out=_out, seed=st.integers(0, 99))
def test_int16_depthwise_conv_2d_is_bit_exact(registry, h, w, c, kernel, stride, dilation, padding, activation, scale,
                                              out, seed):
    if not _fits(h, w, kernel, dilation, padding):
        return
    model = single_op_model("DEPTHWISE_CONV_2D", (1, h, w, c), input_dtype="int16", input_scale=scale, kernel=kernel,
                            stride=stride, dilation=dilation, padding=padding, activation=activation,
                            out_scale=_out_scale(scale, out), seed=seed)
    assert run_and_compare(registry, model, seed) == "ethos-u"


@_SETTINGS
@given(batches=st.integers(1, 3), depth=st.integers(1, 300), units=st.integers(1, 40), activation=_activation,
       per_channel=st.booleans(), scale=_scale, out=_out, seed=st.integers(0, 99))
def test_int16_fully_connected_is_bit_exact(registry, batches, depth, units, activation, per_channel, scale, out, seed):
    model = single_op_model("FULLY_CONNECTED", (batches, depth), input_dtype="int16", input_scale=scale, units=units,
                            activation=activation, per_channel=per_channel, out_scale=_out_scale(scale, out),
                            seed=seed)
    assert run_and_compare(registry, model, seed) == "ethos-u"


@pytest.mark.parametrize("op_type", ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"])
def test_int16_convolutions_of_the_default_models_run_on_the_npu(registry, op_type):
    assert run_and_compare(registry, single_op_model(op_type, input_dtype="int16"), 0) == "ethos-u"


def _patched(op_type: str, name: str, value: int) -> str | None:
    """Why the functional model refuses Vela's int16 stream for ``op_type`` with the cmd0 ``name``'s
    parameter set to ``value`` (None when it runs it)."""
    data, regions = _vela(op_type, None, input_dtype="int16")
    words = list(struct.unpack(f"<{len(data) // 4}I", data))
    i = 8
    while i < len(words):
        ctrl = words[i] >> 14 & 3
        if ctrl == 0 and command_name(0, words[i] & 0x3FF) == name:
            words[i] = (words[i] & 0xFFFF) | value << 16
            break
        i += 2 if ctrl == 1 else 1
    else:
        raise AssertionError(f"{name} not in the stream")
    return stream_refusal(struct.pack(f"<{len(words)}I", *words), regions)


@pytest.mark.parametrize("op_type", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_field_values_of_16_bit_convolutions_the_model_lacks_are_refused_by_name(op_type):
    assert _patched(op_type, "NPU_SET_ACC_FORMAT", 1) is None  # Vela's own value: 40-bit accumulators
    assert "ACC_FORMAT (not 40-bit integer for a 16-bit IFM)" in (_patched(op_type, "NPU_SET_ACC_FORMAT", 0) or "")
    truncate = 0x0003 | 1 << 14  # signed 16-bit OFM, TRUNCATE rounding
    assert "OFM_PRECISION round_mode (not TFL or NATURAL)" in (_patched(op_type, "NPU_SET_OFM_PRECISION", truncate)
                                                              or "")
    unsigned = 0x0004  # unsigned 16-bit IFM
    assert "IFM_PRECISION (not signed 8- or 16-bit)" in (_patched(op_type, "NPU_SET_IFM_PRECISION", unsigned) or "")


def test_a_window_deep_enough_to_overflow_the_40_bit_accumulator_is_declined_and_one_short_of_it_runs(registry):
    # 32,896 elements of 16-bit (x - zero point) by 8-bit weights reach 2^38, half the 40-bit accumulator
    deep = single_op_model("FULLY_CONNECTED", (1, 33000), input_dtype="int16", units=1, seed=2)
    outcome = run_and_compare(registry, deep, 2)
    assert outcome.startswith("the functional model does not implement NPU_OP_CONV with this ACC_FORMAT (a window "
                              "this deep can overflow the 40-bit accumulator)"), outcome
    assert run_and_compare(registry, single_op_model("FULLY_CONNECTED", (1, 32000), input_dtype="int16", units=1,
                                                     seed=2), 2) == "ethos-u"


@pytest.fixture
def int32_biases(monkeypatch):
    """The builder writing 32-bit biases for int16 models (the TFLite converter writes 64-bit ones)."""
    import tflite
    from tvmdevice.aot.builder import model

    int8 = tflite.TensorType.INT8
    write = model.ModelBuilder._bias
    monkeypatch.setattr(model.ModelBuilder, "_bias", lambda self, channels, in_scale, w_scales, depth, ttype=int8:
                        write(self, channels, in_scale, w_scales, depth, int8))


@pytest.mark.parametrize("scale", [0.0005, 0.05, 1.0])
@pytest.mark.parametrize("op_type, shape, params", [
    ("CONV_2D", (1, 6, 7, 17), {"filters": 20}), ("FULLY_CONNECTED", (2, 100), {"units": 9, "per_channel": True}),
])
def test_int16_convolutions_with_32_bit_biases_are_bit_exact_where_32_bits_hold_the_sum(
        registry, int32_biases, op_type, shape, params, scale):
    # Vela quantises the full 32-bit scale for them and emits TFL rounding (double above shift 31)
    model = single_op_model(op_type, shape, input_dtype="int16", input_scale=scale, seed=4, **params)
    assert run_and_compare(registry, model, 4) == "ethos-u"


def test_an_int16_convolution_whose_sum_tflite_micro_accumulates_in_32_bits_is_declined(registry, int32_biases):
    model = single_op_model("FULLY_CONNECTED", (1, 1200), input_dtype="int16", units=1, seed=2)
    outcome = run_and_compare(registry, model, 2)
    assert outcome.startswith("the NPU's arithmetic differs from tflite-micro's: its 40-bit accumulator holds sums "
                              "that tflite-micro's 32-bit one (an int16 FULLY_CONNECTED with a 32-bit bias) "
                              "overflows"), outcome


def _cmd1(words: list[int], name: str) -> int:
    """The payload word of the first cmd1 ``name`` in a payload's command stream."""
    i = 8
    while i < len(words):
        ctrl = words[i] >> 14 & 3
        if ctrl == 1 and command_name(1, words[i] & 0x3FF) == name:
            return words[i + 1]
        i += 2 if ctrl == 1 else 1
    raise AssertionError(f"{name} not in the stream")


@pytest.mark.parametrize("round_mode", [0, 2])  # TFL, NATURAL
def test_a_16_bit_convolution_rescales_products_beyond_64_bits_exactly(round_mode):
    # Vela's int16 FULLY_CONNECTED with each channel's record patched to a bias of 2^38 - 7c, the
    # scale 0xFFFFFFFF - c and the shift 56: acc * scale reaches 2^70, computed in 64-bit pieces

    units, depth = 8, 40
    model = single_op_model("FULLY_CONNECTED", (1, depth), input_dtype="int16", units=units, seed=5)
    data, regions = _vela("FULLY_CONNECTED", (1, depth), input_dtype="int16", units=units, seed=5)
    words = list(struct.unpack(f"<{len(data) // 4}I", data))
    i = 8
    while command_name(words[i] >> 14 & 3, words[i] & 0x3FF) != "NPU_SET_OFM_PRECISION":
        i += 2 if words[i] >> 14 & 3 == 1 else 1
    words[i] = (words[i] & 0xFFFF) | (0x0003 | round_mode << 14) << 16
    compiled, _ = compile_raw(model, DEVICE_TYPE.default_options())
    read_only = np.frombuffer(bytes(compiled.read_only.data), np.uint8).copy()
    records = _cmd1(words, "NPU_SET_SCALE_BASE")
    biases, scales, shift = [(1 << 38) - 7 * c for c in range(units)], [0xFFFFFFFF - c for c in range(units)], 56
    for c in range(units):
        read_only[records + 10 * c:records + 10 * c + 10] = np.frombuffer(
            biases[c].to_bytes(5, "little", signed=True) + scales[c].to_bytes(4, "little") + bytes([shift]), np.uint8)
    scratch = np.zeros(regions[1], np.uint8)
    x = np.random.default_rng(5).integers(-32768, 32768, size=depth, dtype=np.int16)
    ifm, ofm = _cmd1(words, "NPU_SET_IFM_BASE0"), _cmd1(words, "NPU_SET_OFM_BASE0")
    scratch[ifm:ifm + 2 * depth] = x.view(np.uint8)
    code, field, *_ = _ethosu.stream_run(struct.pack(f"<{len(words)}I", *words),
                                         [read_only, scratch, np.zeros(max(regions[2], 1), np.uint8)])
    assert (code, field) == (0, None)
    graph = load_tflite(model)
    (weights,) = [t.data for t in graph.tensors if t.data is not None and t.data.shape == (units, depth)]
    got = scratch[ofm:ofm + 2 * units].view(np.int16)
    for c in range(units):
        acc = biases[c] + int(np.dot(x.astype(np.int64), weights[c].astype(np.int64)))
        rounding = (1 << (shift - 1)) + ((1 << 30 if acc >= 0 else -(1 << 30)) if round_mode == 0 else 0)
        want = min(max((acc * scales[c] + rounding) >> shift, -32768), 32767)
        assert (acc * scales[c]).bit_length() > 64 and 0 < want < 32767
        assert int(got[c]) == want, c


def test_an_int16_chain_of_convolutions_is_one_partition_bit_exact(registry):
    from tvmdevice.aot.builder import ModelBuilder
    from tvmdevice.aot.compiler import compile
    from tvmdevice.testing.oracle import tflm_run

    b = ModelBuilder(name="int16_chain", seed=3)
    x = b.input((1, 9, 9, 3), 0.002, 0, dtype="int16")
    y = b.conv2d(x, filters=12, kernel=(3, 3), stride=2, activation="RELU")
    y = b.depthwise_conv2d(y, kernel=(3, 3))
    b.output(b.conv2d(y, filters=10, kernel=(1, 1)))
    model = b.build()
    module = compile(model, "ethos-u, c", registry=registry)
    assert [[op.type for op in p.ops] for p in module.placement.partitions] == [
        ["CONV_2D", "DEPTHWISE_CONV_2D", "CONV_2D"]]
    rng = np.random.default_rng(0)
    with module.executor() as ex:
        for bound in (32768, 50):
            xs = [rng.integers(-bound, bound, size=(1, 9, 9, 3), dtype=np.int16)]
            (got,) = ex.run(xs)
            want = tflm_run(model, xs).output(0)
            np.testing.assert_array_equal(np.asarray(got).reshape(want.shape), want)


@pytest.fixture
def per_block():
    """The calling thread decodes per OFM block while the test runs, as an exported model does."""
    _ethosu.weight_cache(False)
    try:
        yield
    finally:
        _ethosu.weight_cache(True)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(h=st.integers(3, 7), w=st.integers(3, 7), c=st.sampled_from([1, 3, 17, 40]),
       filters=st.sampled_from([4, 20, 40, 72]), kernel=st.sampled_from([(1, 1), (3, 3), (2, 3)]),
       depthwise=st.booleans(), seed=st.integers(0, 99))
def test_int16_convolutions_decoded_per_ofm_block_are_bit_exact(registry, per_block, h, w, c, filters, kernel,
                                                                 depthwise, seed):
    # the path an export runs: each OFM block's weights decoded when the block runs
    if depthwise:
        model = single_op_model("DEPTHWISE_CONV_2D", (1, h, w, filters), input_dtype="int16", input_scale=0.003,
                                kernel=kernel, seed=seed)
    else:
        model = single_op_model("CONV_2D", (1, h, w, c), input_dtype="int16", input_scale=0.003, filters=filters,
                                kernel=kernel, seed=seed)
    assert not _ethosu.weight_cache()
    assert run_and_compare(registry, model, seed) == "ethos-u"
