"""Each SIMD level of the host kernels, forced one at a time, is bit-exact with tflite-micro.

The property tests (test_bit_exact_ops.py) already run every level this CPU
has on small shapes; here each level is a test parameter (skipped, saying
why, when the CPU lacks it) over the shapes that reach its vector loops:
full 16- and 32-channel depthwise blocks with every channel tail, wide and narrow GEMM
tiles, batch-1 FULLY_CONNECTED on int8 weight panels (and its fallback), requantization tails,
and every int8 input pair of ADD, SUB, MUL, MAXIMUM and MINIMUM, with broadcast rows;
pooling channel blocks and softmax rows.  The VNNI levels (the int8 GEMM of
CONV_2D and FULLY_CONNECTED batch > 1) get reductions not a multiple of 4,
column tails, groups, and the extreme input zero points.

Levels this CPU lacks skip; an emulated build (TVMDEVICE_CMSIS_SIMD_EMULATION=1,
libsimde-dev) runs every level on any x86-64 CPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import ModelBuilder, single_op_model
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.testing.oracle import tflm_run

from tvmdevice_cmsis import _kernels, kernels
from tvmdevice_cmsis.ops import _common

from conftest import assert_bit_exact, run_cmsis, simd_level_params, simd_path

pytestmark = pytest.mark.parametrize("level", simd_level_params())


@pytest.mark.parametrize("channels, stride, padding, dilation", [
    (16, (1, 1), "SAME", (1, 1)), (37, (2, 2), "SAME", (1, 1)), (64, (1, 2), "VALID", (1, 1)),
    (21, (1, 1), "SAME", (2, 2))])
@pytest.mark.parametrize("input_zero_point", [-128, 3, 127])
def test_depthwise_vector_blocks(level, channels, stride, padding, dilation, input_zero_point):
    """Full 16-channel blocks and a tail; border taps read the zero point, which must add nothing."""
    model = single_op_model("DEPTHWISE_CONV_2D", input_shape=(2, 7, 6, channels), kernel=(3, 3), stride=stride,
                            padding=padding, dilation=dilation, depth_multiplier=1, per_channel=True, bias=True,
                            activation="RELU6", input_zero_point=input_zero_point, out_zero_point=-9, seed=channels)
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("channels", [2, 3, 7, 8, 9, 15, 17, 24, 31, 32, 33, 47, 48, 63, 70])
@pytest.mark.parametrize("input_zero_point", [-128, 127])
def test_depthwise_channel_blocks_and_tails(level, channels, input_zero_point):
    """Every block and tail of the vector loops (AVX2: 16, then 8, then the last 1..7 channels; AVX-512: 32,
    then a masked block of up to 32 or 16) with border taps on every side, per channel requantization."""
    model = single_op_model("DEPTHWISE_CONV_2D", input_shape=(1, 5, 4, channels), kernel=(3, 3), padding="SAME",
                            depth_multiplier=1, per_channel=True, bias=True, activation="RELU6",
                            input_zero_point=input_zero_point, out_zero_point=-3, seed=channels)
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("shape, kernel", [((1, 1, 1, 3), (3, 3)), ((1, 2, 2, 5), (2, 2)), ((2, 3, 1, 7), (3, 1)),
                                           ((1, 2, 3, 14), (1, 1))])
def test_depthwise_tail_at_the_end_of_the_image(level, shape, kernel):
    """The AVX2 tail of 1..7 channels reads 8 bytes in place except where they would cross the image's end:
    tiny images whose every tap is near it (and a second batch image right behind the first)."""
    model = single_op_model("DEPTHWISE_CONV_2D", input_shape=shape, kernel=kernel, padding="SAME",
                            depth_multiplier=1, per_channel=True, bias=True, input_zero_point=-7, seed=shape[3])
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("kernel, dilation, quads", [((10, 8), (1, 1), 2), ((4, 4), (1, 1), 1),
                                                     ((3, 3), (1, 1), 1), ((4, 4), (1, 2), 0)])
def test_one_channel_depthwise_takes_the_vnni_gemm(level, kernel, dilation, quads):
    """A one-input-channel DEPTHWISE_CONV_2D runs as a convolution and gets the VNNI operands wherever a VNNI
    level can run (micro_speech's 10x8 /2 measured 3.4x faster on them than on the int16 GEMM): filter rows
    read in place, each padded to whole quads (10x8: 2 quads of 4 steps; 3x3: 1), or with a dilated width
    im2col rows (0).  Bit-exact either way."""
    model = single_op_model("DEPTHWISE_CONV_2D", input_shape=(1, 13, 11, 1), kernel=kernel, dilation=dilation,
                            stride=(2, 2), padding="SAME", depth_multiplier=8, per_channel=True, bias=True,
                            input_zero_point=-128, seed=kernel[1])
    graph = load_tflite(model)
    values = kernels.prepare(graph, graph.operators[0]).params.values
    packs = _kernels.simd_emulated() or any(name.endswith("vnni") for name in _kernels.simd_levels())
    assert (values["weights_vnni"] is not None) == packs
    if packs:
        assert values["vnni_segment_quads"] == quads
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("kernel", [(1, 1), (5, 5), (2, 3)])
def test_depthwise_tap_counts(level, kernel):
    """Even and odd tap counts (an odd last tap is paired with a zero-weight partner)."""
    model = single_op_model("DEPTHWISE_CONV_2D", input_shape=(1, 6, 6, 24), kernel=kernel, padding="SAME",
                            depth_multiplier=1, per_channel=True, input_zero_point=-5, seed=1)
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("channels", [256, 272])
def test_depthwise_channel_chunks(level, channels):
    """The portable loop requantizes 256 channels at a time: one chunk exactly, and a second with a tail."""
    model = single_op_model("DEPTHWISE_CONV_2D", input_shape=(1, 4, 5, channels), kernel=(3, 3), padding="SAME",
                            depth_multiplier=1, per_channel=True, bias=True, input_zero_point=127, seed=channels)
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("filters, kernel", [(8, (1, 1)), (16, (1, 1)), (37, (3, 3)), (80, (1, 1)), (130, (3, 1))])
def test_conv_gemm_tiles(level, filters, kernel):
    """GEMM column counts below, at and past the 16-column block; pointwise and im2col inputs."""
    model = single_op_model("CONV_2D", input_shape=(1, 5, 7, 12), filters=filters, kernel=kernel, padding="SAME",
                            per_channel=True, bias=True, input_zero_point=-17, seed=filters)
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("in_ch, kernel, stride, dilation", [
    (8, (3, 3), (1, 1), (1, 1)), (16, (3, 3), (2, 2), (1, 1)), (6, (2, 3), (1, 2), (2, 1)),
    (8, (3, 3), (1, 1), (1, 2)), (5, (3, 3), (1, 1), (1, 1)), (5, (2, 2), (2, 1), (1, 1))])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv_rows_read_in_place_from_the_bordered_image(level, in_ch, kernel, stride, dilation, padding):
    """AVX2 reads each output pixel's filter rows straight from the bordered image (no im2col copy) when
    they are contiguous spans of whole pairs: dilated rows (a segment stride), strides, two batch images,
    pixel counts past a multiple of 4, 40 filters (a column tail); a dilated width or an odd span
    (filter_w x in_ch) takes the im2col rows.  Border taps read the zero point's 0."""
    model = single_op_model("CONV_2D", input_shape=(2, 7, 9, in_ch), filters=40, kernel=kernel, stride=stride,
                            dilation=dilation, padding=padding, per_channel=True, bias=True, input_zero_point=-128,
                            out_zero_point=3, activation="RELU", seed=in_ch * 10 + kernel[1])
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("in_ch", [1, 7, 16, 33])
def test_pointwise_conv_rows_widened_in_place(level, in_ch):
    """1x1 stride-1 unpadded: input pixels widened straight into GEMM rows (odd depths get the pair padding)."""
    model = single_op_model("CONV_2D", input_shape=(2, 3, 5, in_ch), filters=19, kernel=(1, 1), padding="VALID",
                            per_channel=True, bias=True, input_zero_point=-100, seed=in_ch)
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("batches, units", [(1, 10), (3, 16), (5, 33)])
def test_fully_connected_gemm_rows(level, batches, units):
    """Batch rows below and past the 4-row tile, column tails."""
    model = single_op_model("FULLY_CONNECTED", input_shape=(batches, 27), units=units, activation="RELU",
                            input_zero_point=9, seed=units)
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("depth, units", [(1, 3), (31, 64), (32, 8), (33, 65), (27, 10), (640, 37), (128, 130)])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
@pytest.mark.parametrize("input_zero_point", [-128, 127])
def test_fully_connected_batch1_int8_panels(level, depth, units, per_channel, input_zero_point):
    """Batch 1 reads int8 weight panels on the raw input: depths below, at and past the 4-value step (the
    tail read through a copy), column counts below, at and past the 8-column block and the 64-column panel,
    inputs offset by the extreme zero points (the offset's share precomputed per column).  Where a VNNI level
    can run, the panels' VNNI start, (input_offset - 128) x each column's weight sum, is packed beside them."""
    model = single_op_model("FULLY_CONNECTED", input_shape=(1, depth), units=units, per_channel=per_channel,
                            input_zero_point=input_zero_point, out_zero_point=-128 if per_channel else 127,
                            seed=depth + units)
    graph = load_tflite(model)
    values = kernels.prepare(graph, graph.operators[0]).params.values
    assert values["weights_s8"] is not None and values["weights_vnni"] is None
    if _common.vnni_packing():
        weights = np.asarray(graph.tensor(graph.operators[0].inputs[1]).data).reshape(units, depth).astype(np.int64)
        correction = np.asarray(values["vnni_correction"])
        assert correction.shape == (_common.padded(units, 8),) and not correction[units:].any()
        assert np.array_equal(correction[:units], (-input_zero_point - 128) * weights.sum(axis=1))
    else:
        assert values["vnni_correction"] is None
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("k_shape, filters", [((1, 1, 1), 3), ((1, 1, 6), 17), ((3, 3, 3), 64), ((1, 3, 5), 80),
                                               ((2, 2, 9), 130)])
@pytest.mark.parametrize("input_zero_point", [-128, 127])
def test_conv_reduction_and_column_tails(level, k_shape, filters, input_zero_point):
    """Reductions k = taps x channels not a multiple of 4 (the VNNI GEMM's quad steps, zero padded) and of
    2, column counts below, at and past the 16- and 64-column blocks, the extreme input zero points (u = x +
    128 spans 0..255; border taps read the zero point, which must add exactly 0)."""
    kh, kw, in_ch = k_shape
    model = single_op_model("CONV_2D", input_shape=(2, 6, 5, in_ch), filters=filters, kernel=(kh, kw),
                            padding="SAME", stride=(1, 2), per_channel=True, bias=True,
                            input_zero_point=input_zero_point, out_zero_point=-input_zero_point // 2,
                            activation="RELU6", seed=kh * 100 + filters)
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("groups", [2, 3])
def test_grouped_conv(level, groups):
    """Each group's weights, corrections and output columns at their offsets."""
    model = single_op_model("CONV_2D", input_shape=(1, 5, 5, 6 * groups), filters=10 * groups, kernel=(3, 3),
                            padding="SAME", groups=groups, per_channel=True, bias=True, input_zero_point=-3,
                            seed=groups)
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("batches, depth, units", [(2, 1, 5), (4, 7, 16), (7, 33, 70), (9, 64, 130)])
@pytest.mark.parametrize("input_zero_point", [-128, 127])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
def test_fully_connected_batches(level, batches, depth, units, input_zero_point, bias):
    """FULLY_CONNECTED batch > 1: 4-row tiles and single rows, depths not a multiple of 4, column tails,
    extreme zero points, with and without bias."""
    model = single_op_model("FULLY_CONNECTED", input_shape=(batches, depth), units=units, bias=bias,
                            input_zero_point=input_zero_point, out_zero_point=5, seed=batches + depth + units)
    assert_bit_exact(model, levels=[level])


def test_vnni_operands_are_packed_only_where_a_vnni_level_can_run_them(level):
    """The int8 VNNI weights and corrections cost bytes: packed when the CPU has a VNNI level or the build is
    emulated, else absent; the correction is (input_offset - 128) x each column's weight sum.  An ungrouped
    convolution's filter rows (3 x 5 steps) are each padded to whole quads (4), the GEMM reading them in place."""
    model = single_op_model("CONV_2D", input_shape=(1, 4, 4, 5), filters=18, kernel=(3, 3), padding="SAME",
                            per_channel=True, input_zero_point=-20, seed=4)
    graph = load_tflite(model)
    values = kernels.prepare(graph, graph.operators[0]).params.values
    vnni = _kernels.simd_emulated() or any(name.endswith("vnni") for name in _kernels.simd_levels())
    if not vnni:
        assert values["weights_vnni"] is None and values["vnni_correction"] is None
        return
    weights = np.asarray(graph.tensor(graph.operators[0].inputs[1]).data).reshape(18, 3, 15).astype(np.int64)
    k4, ldw = 12, 32
    assert values["vnni_segment_quads"] == 4
    packed = np.asarray(values["weights_vnni"]).reshape(k4, ldw, 4).transpose(1, 0, 2).reshape(ldw, 3, 16)
    assert np.array_equal(packed[:18, :, :15], weights)
    assert not packed[18:].any()
    assert not packed[:, :, 15:].any()
    correction = np.asarray(values["vnni_correction"]).reshape(-1)
    assert np.array_equal(correction[:18], (20 - 128) * weights.sum(axis=(1, 2)))
    assert not correction[18:].any()


def test_a_vnni_level_without_packed_operands_runs_the_int16_gemm(level, monkeypatch):
    """A model prepared where no VNNI level runs has no VNNI operands: on every level (a VNNI level falls back to
    its base level's int16 GEMM) CONV_2D and FULLY_CONNECTED stay bit-exact."""
    monkeypatch.setattr(_common, "vnni_packing", lambda: False)
    conv = single_op_model("CONV_2D", input_shape=(1, 5, 5, 7), filters=20, kernel=(3, 3), padding="SAME",
                           per_channel=True, input_zero_point=-128, seed=2)
    graph = load_tflite(conv)
    assert kernels.prepare(graph, graph.operators[0]).params.values["weights_vnni"] is None
    assert_bit_exact(conv, levels=[level])
    dense = single_op_model("FULLY_CONNECTED", input_shape=(6, 21), units=18, input_zero_point=127, seed=3)
    assert_bit_exact(dense, levels=[level])


def fully_connected_with_weights(depth: int, units: int, zero_point: int, set_weights: Any = None) -> bytes:
    """A batch-1 per-tensor FULLY_CONNECTED whose weights have ``zero_point`` and, optionally, values
    changed by ``set_weights`` (an int8 ``[units, depth]`` array edited in place)."""
    b = ModelBuilder(seed=depth + units)
    x = b.input((1, depth), scale=0.03, zero_point=-128)
    b.output(b.fully_connected(x, units))
    weights = b.spec.tensors[b.spec.operators[0].inputs[1]]
    weights.zero_points = [zero_point]
    if set_weights is not None:
        values = np.frombuffer(b.spec.buffers[weights.buffer], dtype=np.int8).reshape(units, depth).copy()
        set_weights(values)
        b.spec.buffers[weights.buffer] = values.tobytes()
    return b.build()


def test_fully_connected_batch1_weight_minus_128_takes_the_gemm(level):
    """vpmaddubsw's sign trick is exact only for weights in [-127, 127]: one -128 sends the operator to
    the GEMM's int16 layout, still bit-exact."""
    def minus_128(values: np.ndarray) -> None:
        values[:, 5] = -128  # in every column

    model = fully_connected_with_weights(40, 20, 0, minus_128)
    graph = load_tflite(model)
    assert kernels.prepare(graph, graph.operators[0]).params.values["weights_s8"] is None
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("zero_point, panels", [(-3, True), (1, True), (-128, False), (100, False)])
def test_fully_connected_batch1_weights_offset(level, zero_point, panels):
    """Per-tensor weights with a zero point: the offset is added into the panels when every weight minus
    the zero point is in [-127, 127] (clipped so, with both ends present), else the weights take the GEMM."""
    def extremes(values: np.ndarray) -> None:
        if panels:
            lo, hi = max(-128, zero_point - 127), min(127, zero_point + 127)
            np.clip(values, lo, hi, out=values)
            values[0, :2] = (lo, hi)

    model = fully_connected_with_weights(70, 19, zero_point, extremes)
    graph = load_tflite(model)
    assert (kernels.prepare(graph, graph.operators[0]).params.values["weights_s8"] is not None) == panels
    assert_bit_exact(model, levels=[level])


#: Every int8 pair once: input 1 runs slowly, input 2 fast (65,536 elements).
PAIRS = (np.repeat(np.arange(-128, 128, dtype=np.int8), 256), np.tile(np.arange(-128, 128, dtype=np.int8), 256))

#: (input scale, input zero point, input 2 scale, input 2 zero point, output scale, output zero point, activation).
#: The last: MUL's output factor 1.25 (a left shift, no rounding shift).
QUANT_SETS = [(0.05, 0, 0.05, 0, 0.1, 0, "NONE"), (0.0039, -128, 0.11, 17, 0.02, -3, "RELU"),
              (0.2, 127, 0.013, -128, 0.5, 100, "RELU6"), (0.031, -5, 0.031, -5, 0.004, -128, "RELU_N1_TO_1"),
              (0.5, 3, 0.25, -7, 0.1, 2, "NONE")]


def assert_inputs_bit_exact(model: bytes, inputs: list[np.ndarray], level: str) -> None:
    """On ``level``, the cmsis-nn output for these ``inputs`` equals TFLM's, value for value."""
    graph = load_tflite(model)
    oracle = tflm_run(model, inputs).output(0)
    with simd_path(level):
        ours = run_cmsis(graph, inputs)
    diff = np.flatnonzero(ours.reshape(-1) != oracle.reshape(-1))
    assert diff.size == 0, (f"{level}: {diff.size} of {ours.size} values differ from TFLM; first for inputs "
                            f"({inputs[0].reshape(-1)[diff[0]]}, {inputs[1].reshape(-1)[diff[0]]}): "
                            f"{ours.reshape(-1)[diff[0]]} vs {oracle.reshape(-1)[diff[0]]}")


@pytest.mark.parametrize("quant", QUANT_SETS, ids=[f"q{i}" for i in range(len(QUANT_SETS))])
@pytest.mark.parametrize("op_type", ["ADD", "SUB", "MUL"])
def test_add_sub_mul_every_input_pair(level, op_type, quant):
    s1, z1, s2, z2, so, zo, activation = quant
    model = single_op_model(op_type, input_shape=(PAIRS[0].size,), input_scale=s1, input_zero_point=z1,
                            input2_shape=(PAIRS[1].size,), input2_scale=s2, input2_zero_point=z2,
                            out_scale=so, out_zero_point=zo, activation=activation)
    assert_inputs_bit_exact(model, list(PAIRS), level)


@pytest.mark.parametrize("shape1, shape2", [((3, 37), (1, 37)), ((3, 37), (3, 1)), ((2, 3, 40), (1,)),
                                            ((1,), (5, 33)), ((2, 1, 37), (1, 4, 37)), ((2, 3, 1), (2, 1, 21)),
                                            ((2, 150), (1, 150)), ((131,), (1,)), ((3, 1), (3, 64))])
@pytest.mark.parametrize("op_type", ["ADD", "SUB", "MUL"])
def test_add_sub_mul_broadcast_rows(level, op_type, shape1, shape2):
    """Rows longer than one vector step with a tail (AVX2: 16 values, AVX-512: 64), or exactly one AVX-512
    step, each operand contiguous or one repeated value."""
    model = single_op_model(op_type, input_shape=shape1, input_scale=0.07, input_zero_point=-11,
                            input2_shape=shape2, input2_scale=0.02, input2_zero_point=40, out_scale=0.09,
                            out_zero_point=6)
    rng = np.random.default_rng(len(shape1) + len(shape2))
    inputs = [rng.integers(-128, 128, size=s, dtype=np.int8) for s in (shape1, shape2)]
    assert_inputs_bit_exact(model, inputs, level)


@pytest.mark.parametrize("op_type", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize("size", [PAIRS[0].size, 77])
def test_maximum_minimum_every_input_pair(level, op_type, size):
    model = single_op_model(op_type, input_shape=(size,), input2_shape=(size,))
    assert_inputs_bit_exact(model, [PAIRS[0][:size], PAIRS[1][::-1][:size].copy()], level)


#: Broadcast shapes of MAXIMUM/MINIMUM: runs of 32+ with an overlapping last step, of 16..31, of fewer than
#: 16, each operand contiguous or one repeated value, suffixes of dimensions merged into one run.
MINMAX_BROADCASTS = [((3, 37), (1, 37)), ((3, 70), (3, 1)), ((2, 3, 40), (1,)), ((1,), (5, 33)),
                     ((2, 1, 37), (1, 4, 37)), ((2, 3, 1), (2, 1, 21)), ((2, 4, 4, 5), (1, 1, 1, 5)),
                     ((2, 3, 7), (1, 3, 1)), ((4, 4, 2), (4, 1, 1)), ((1, 64), (5, 1)), ((2, 32), (1, 1))]


@pytest.mark.parametrize("shape1, shape2", MINMAX_BROADCASTS)
@pytest.mark.parametrize("op_type", ["MAXIMUM", "MINIMUM"])
def test_maximum_minimum_broadcast_rows(level, op_type, shape1, shape2):
    model = single_op_model(op_type, input_shape=shape1, input2_shape=shape2)
    rng = np.random.default_rng(sum(shape1) + 7 * sum(shape2))
    inputs = [rng.integers(-128, 128, size=s, dtype=np.int8) for s in (shape1, shape2)]
    assert_inputs_bit_exact(model, inputs, level)


#: Channel counts of the pooling blocks: below 4 (one by one), 4/8/16-wide blocks, 32-wide MAX blocks, each
#: exact and with an overlapping last block.
POOL_CHANNELS = [1, 3, 4, 6, 8, 13, 16, 21, 32, 45, 64, 77]


@pytest.mark.parametrize("channels", POOL_CHANNELS)
@pytest.mark.parametrize("pool, stride, padding", [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME"),
                                                   ((3, 2), (1, 2), "SAME")])
@pytest.mark.parametrize("activation", ["NONE", "RELU6"])
@pytest.mark.parametrize("op_type", ["MAX_POOL_2D", "AVERAGE_POOL_2D"])
def test_pooling_channel_blocks(level, op_type, activation, pool, stride, padding, channels):
    """Windows clipped at SAME borders (average: fewer taps, other rounding), outputs unclamped or clamped by
    RELU6 (input zero point 3: the range [3, 123])."""
    model = single_op_model(op_type, input_shape=(2, 7, 6, channels), pool=pool, stride=stride, padding=padding,
                            activation=activation, input_scale=0.05, input_zero_point=3, seed=channels)
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("pool", [(16, 16), (16, 17)], ids=["256-taps", "272-taps"])
@pytest.mark.parametrize("fill", [-128, 127, None], ids=["min", "max", "random"])
@pytest.mark.parametrize("op_type", ["MAX_POOL_2D", "AVERAGE_POOL_2D"])
def test_pooling_whole_image_windows(level, op_type, pool, fill):
    """A window of 256 taps sums to the int16 extremes (-128 * 256, 127 * 256) on the vector path; 272 taps
    run the portable average."""
    shape = (1, 16, 17, 40)
    model = single_op_model(op_type, input_shape=shape, pool=pool, stride=(1, 1), padding="VALID", input_scale=0.02,
                            input_zero_point=-1)
    rng = np.random.default_rng(7)
    x = rng.integers(-128, 128, size=shape, dtype=np.int8) if fill is None else np.full(shape, fill, np.int8)
    graph = load_tflite(model)
    oracle = tflm_run(model, [x]).output(0)
    with simd_path(level):
        ours = run_cmsis(graph, [x])
    assert np.array_equal(ours, oracle.reshape(ours.shape))


@pytest.mark.parametrize("shape", [(1, 1000), (3, 7), (4, 300), (2, 1)])
@pytest.mark.parametrize("input_scale, beta", [(0.1, 1.0), (0.05, 0.5), (1.0, 2.0), (0.02, 1.0)])
@pytest.mark.parametrize("out_dtype", ["int8", "int16"])
def test_softmax_rows(level, shape, input_scale, beta, out_dtype):
    """Rows longer and shorter than the distances below their maximum (the vector levels memoize the
    exponentials per distance and map long rows through a table when a call has more than 256 entries: (1, 1000)
    and (4, 300); the others run the plain loop), entries past diff_min, int8 and int16 out."""
    model = single_op_model("SOFTMAX", input_shape=shape, input_scale=input_scale, beta=beta, out_dtype=out_dtype,
                            seed=shape[1])
    assert_bit_exact(model, seeds=(0, 1, 2), levels=[level])


@settings(max_examples=min(settings().max_examples, 40))
@given(st.data())
def test_fully_connected_shapes(level, data):
    """FULLY_CONNECTED over depths 1..300, 1..70 units and 1..3 batch rows (batch 1: the int8 panels on every
    level's GEMV; more rows: the GEMMs), any zero points, per-tensor or per-channel, with or without bias."""
    depth, units, batches = data.draw(st.integers(1, 300)), data.draw(st.integers(1, 70)), data.draw(st.integers(1, 3))
    model = single_op_model("FULLY_CONNECTED", input_shape=(batches, depth), units=units,
                            per_channel=data.draw(st.booleans()), bias=data.draw(st.booleans()),
                            activation=data.draw(st.sampled_from(["NONE", "RELU", "RELU6"])),
                            input_zero_point=data.draw(st.integers(-128, 127)),
                            out_zero_point=data.draw(st.integers(-128, 127)), seed=data.draw(st.integers(0, 100)))
    assert_bit_exact(model, seeds=(0,), levels=[level])


@pytest.mark.parametrize("shape, scratch", [((1, 25, 5, 64), True), ((2, 9, 7, 40), True), ((1, 3, 200, 64), False)])
def test_depthwise_pair_rows_scratch_and_its_fallback(level, shape, scratch):
    """Depth multiplier 1 takes a scratch ring of widened pair rows (the AVX-512 path reads it; the other levels
    leave it unused) unless the ring of the filter's rows would pass 64 KiB (a 200-pixel row of 64 channels,
    3 rows x 203 columns x 256 B): then none, and the AVX-512 level runs the scratch-free loop.  Bit-exact
    either way, with a second batch image through the same ring."""
    model = single_op_model("DEPTHWISE_CONV_2D", input_shape=shape, kernel=(3, 3), padding="SAME",
                            depth_multiplier=1, per_channel=True, bias=True, activation="RELU6",
                            input_zero_point=-128, out_zero_point=5, seed=shape[2])
    graph = load_tflite(model)
    assert (kernels.prepare(graph, graph.operators[0]).scratch_bytes > 0) == scratch
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("channels", [1, 3, 5, 7, 8, 9])
@pytest.mark.parametrize("width, stride, dilation", [(6, (1, 1), (1, 1)), (7, (1, 1), (1, 1)),
                                                     (7, (1, 1), (1, 2)), (7, (2, 1), (1, 1)), (6, (1, 2), (1, 1))])
def test_depthwise_narrow_pair_rows(level, channels, width, stride, dilation):
    """A 3x3 filter on 8 channels or fewer at stride 1 along x carries two output pixels per 512-bit register
    on AVX-512 (pair columns of 8 channels): an odd last pixel alone, channels 1..7 stored pixel by pixel,
    dilated taps, a second batch image; 9 channels and stride 2 along x take the 16-channel rows."""
    model = single_op_model("DEPTHWISE_CONV_2D", input_shape=(2, 5, width, channels), kernel=(3, 3),
                            stride=stride, dilation=dilation, padding="SAME", depth_multiplier=1, per_channel=True,
                            bias=True, activation="RELU6", input_zero_point=-5, out_zero_point=7, seed=channels)
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("channels, kernel", [(8, (3, 3)), (32, (3, 3)), (21, (5, 3))])
@pytest.mark.parametrize("weight_scale, out_scale", [(0.02, 0.001), (0.05, 0.0002)])
def test_depthwise_requantization_shifting_left(level, channels, kernel, weight_scale, out_scale):
    """Multipliers above 1 (a small output scale): the requantization shifts left first, which the AVX-512 rows
    skip only where no channel of a block does; per-channel scales around the weight scale put channels on both
    sides of 1 in the first case."""
    b = ModelBuilder(seed=channels)
    x = b.input((1, 6, 5, channels), 0.05, -3)
    b.output(b.depthwise_conv2d(x, kernel=kernel, padding="SAME", per_channel=True, out_scale=out_scale,
                                 out_zero_point=4, weight_scale=weight_scale))
    assert_bit_exact(b.build(), levels=[level])


@settings(max_examples=min(settings().max_examples, 40))
@given(st.data())
def test_depthwise_shapes(level, data):
    """DEPTHWISE_CONV_2D with depth multiplier 1 over 1..70 channels, filters 1..5 x 1..5, strides, dilations and
    both paddings, any zero points: the pair rows of every level's loop and their borders."""
    kernel = (data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5)))
    stride = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    dilation = (1, 1) if stride != (1, 1) else (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    padding = data.draw(st.sampled_from(["SAME", "VALID"]))
    size = [data.draw(st.integers(1, 9)) for _ in range(2)]
    if padding == "VALID":  # at least one output pixel
        size = [max(s, (k - 1) * d + 1) for s, k, d in zip(size, kernel, dilation)]
    model = single_op_model("DEPTHWISE_CONV_2D", input_shape=(1, *size, data.draw(st.integers(1, 70))),
                            kernel=kernel, stride=stride, dilation=dilation, padding=padding, depth_multiplier=1,
                            per_channel=True, bias=data.draw(st.booleans()),
                            input_zero_point=data.draw(st.integers(-128, 127)),
                            out_zero_point=data.draw(st.integers(-128, 127)), seed=data.draw(st.integers(0, 100)))
    assert_bit_exact(model, seeds=(0,), levels=[level])
