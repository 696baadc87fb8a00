"""CONV_2D over the shapes of the host GEMM's tiles, bit-exact with tflite-micro at each SIMD level.

The VNNI GEMM reads a convolution's filter rows in place from the bordered image (each filter row padded to
whole quads of 4 reduction steps with zero weights) and a pointwise convolution's int8 pixels in place when
they are whole quads; on AVX-512 VNNI it runs tiles of 16 rows (then one of 8) for one 16-column vector, 12
for two, 8 for three, 6 for four, then rows of 4 and of 1.  These tests reach each tile and each tail: output
widths past every tile height, column counts of 1 to 5 vectors and their tails, filter rows of 1 to 4 quads
with 0 to 3 padding steps, strides, dilations, paddings, groups, and the extreme input zero points; a property
test draws channel counts 1..70.  Levels this CPU lacks skip (an emulated build runs them all).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import single_op_model
from tvmdevice.errors import ModelError

from conftest import assert_bit_exact, simd_level_params

pytestmark = pytest.mark.parametrize("level", simd_level_params())


@pytest.mark.parametrize("filters", [16, 32, 48, 64, 80, 8, 30])
@pytest.mark.parametrize("out_w", [1, 5, 12, 17, 20, 28, 29])
def test_tile_heights_and_column_blocks(level, filters, out_w):
    """Output rows of 1..29 pixels (the tall tiles, their 8-, 4- and single-row tails: 28 = 16 + 8 + 4) by 1 to 5 column
    vectors, full and partial, on a 16-channel 3x3 convolution (filter rows of 12 quads, read in place)."""
    model = single_op_model("CONV_2D", input_shape=(1, 3, out_w, 16), filters=filters, kernel=(3, 3),
                            padding="SAME", per_channel=True, bias=True, input_zero_point=-128, out_zero_point=7,
                            activation="RELU", seed=filters + out_w)
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("in_ch", [1, 2, 3, 4, 5, 7, 8, 9])
@pytest.mark.parametrize("kernel, stride", [((3, 3), (2, 2)), ((10, 4), (2, 2)), ((1, 3), (1, 1)), ((2, 5), (1, 3))])
def test_first_layer_filter_rows_padded_to_quads(level, in_ch, kernel, stride):
    """Few input channels: filter rows of kw x in_ch steps, 0 to 3 of them padding of the row's last quad,
    whose bytes (the next pixel's, or past the band) meet zero weights -- a MobileNetV2 stem (3 channels, 3x3
    /2), a KWS first layer (1 channel, 10x4 /2)."""
    model = single_op_model("CONV_2D", input_shape=(1, 11, 13, in_ch), filters=32, kernel=kernel, stride=stride,
                            padding="SAME", per_channel=True, bias=True, input_zero_point=127, out_zero_point=-9,
                            activation="RELU6", seed=in_ch * 7 + kernel[1])
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("in_ch, filters", [(8, 16), (64, 64), (12, 8), (6, 16), (33, 20)])
@pytest.mark.parametrize("input_zero_point", [-128, 0, 127])
def test_pointwise_in_place_and_copied(level, in_ch, filters, input_zero_point):
    """Pointwise convolutions: pixels of whole quads (8, 64, 12 channels) read in place as int8 and flipped
    as broadcast; 6 and 33 channels copied into padded rows.  Two batch images; 7 x 9 pixels."""
    model = single_op_model("CONV_2D", input_shape=(2, 7, 9, in_ch), filters=filters, kernel=(1, 1),
                            padding="VALID", per_channel=True, bias=True, input_zero_point=input_zero_point,
                            out_zero_point=-input_zero_point // 3, seed=in_ch + filters)
    assert_bit_exact(model, levels=[level])


def conv_or_none(params: dict[str, Any]) -> bytes | None:
    try:
        model = single_op_model("CONV_2D", **params)
        from tvmdevice.aot.frontend import load_tflite

        load_tflite(model)  # the host reference's Prepare checks (TFLM's)
    except (ModelError, ValueError):
        return None
    return model


@settings(max_examples=60)
@given(data=st.data())
def test_conv_channel_counts(level, data):
    """Channel counts 1..70 in and out, kernels up to 5x5, strides, dilations, paddings, groups and zero
    points: every path (rows in place, im2col, pointwise) on each level."""
    in_ch = data.draw(st.integers(1, 70), label="in_ch")
    groups = data.draw(st.sampled_from([g for g in (1, 2, 3) if in_ch % g == 0]), label="groups")
    params: dict[str, Any] = dict(
        input_shape=(1, data.draw(st.integers(1, 8)), data.draw(st.integers(1, 14)), in_ch),
        filters=groups * data.draw(st.integers(1, 70 // groups)), groups=groups,
        kernel=(data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))),
        stride=(data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))),
        dilation=(data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))),
        padding=data.draw(st.sampled_from(["SAME", "VALID"])), per_channel=data.draw(st.booleans()),
        bias=data.draw(st.booleans()), activation=data.draw(st.sampled_from(["NONE", "RELU", "RELU6"])),
        input_zero_point=data.draw(st.integers(-128, 127)), out_zero_point=data.draw(st.integers(-128, 127)),
        seed=data.draw(st.integers(0, 1000)))
    model = conv_or_none(params)
    if model is not None:
        assert_bit_exact(model, seeds=(0,), levels=[level])
