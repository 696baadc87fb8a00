"""Each SIMD level of the host kernels, forced one at a time, is bit-exact with tflite-micro.

The property tests (test_bit_exact_ops.py) already run every level this CPU
has on small shapes; here each level is a test parameter (skipped, saying
why, when the CPU lacks it) over the shapes that reach its vector loops:
full 16-channel depthwise blocks with channel tails, wide and narrow GEMM
tiles, requantization tails.
"""

from __future__ import annotations

import pytest
from tvmdevice.aot.builder import single_op_model

from conftest import assert_bit_exact, simd_level_params

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


@pytest.mark.parametrize("kernel", [(1, 1), (5, 5), (2, 3)])
def test_depthwise_tap_counts(level, kernel):
    """Even and odd tap counts (an odd last tap is paired with a zero-weight partner)."""
    model = single_op_model("DEPTHWISE_CONV_2D", input_shape=(1, 6, 6, 24), kernel=kernel, padding="SAME",
                            depth_multiplier=1, per_channel=True, input_zero_point=-5, seed=1)
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("filters, kernel", [(8, (1, 1)), (16, (1, 1)), (37, (3, 3)), (80, (1, 1)), (130, (3, 1))])
def test_conv_gemm_tiles(level, filters, kernel):
    """GEMM column counts below, at and past the 16-column block; pointwise and im2col inputs."""
    model = single_op_model("CONV_2D", input_shape=(1, 5, 7, 12), filters=filters, kernel=kernel, padding="SAME",
                            per_channel=True, bias=True, input_zero_point=-17, seed=filters)
    assert_bit_exact(model, levels=[level])


@pytest.mark.parametrize("batches, units", [(1, 10), (3, 16), (5, 33)])
def test_fully_connected_gemm_rows(level, batches, units):
    """Batch rows below and past the 4-row tile, column tails."""
    model = single_op_model("FULLY_CONNECTED", input_shape=(batches, 27), units=units, activation="RELU",
                            input_zero_point=9, seed=units)
    assert_bit_exact(model, levels=[level])
