"""CONV_2D images larger than the band budget are built a band of output rows at a time.

conv.c keeps a bordered image of at most TVMD_CMSIS_CONV_BAND_BYTES (64 KiB of int16) whole; a larger one
is widened (the VNNI path: copied as u bytes) one band of output rows at a time, the input rows that band's
windows read, so the scratch stays near that size and the operator is not declined over ``-scratch_kb``.
Every SIMD level must stay bit-exact across the band seams: the in-place AVX2 rows, the im2col rows
(odd spans, dilation, strides), groups, bands of a single output row, and the VNNI GEMM.
"""

from __future__ import annotations

import numpy as np
import pytest
import tvmdevice
from tvmdevice.aot.builder import single_op_model
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.testing.oracle import tflm_run

from tvmdevice_cmsis import kernels

from conftest import assert_bit_exact, simd_level_params

BAND_BYTES = 64 * 1024


def whole_image_bytes(shape, kernel, stride, dilation, padding) -> int:
    """The int16 bordered image conv.c built whole before bands (rows x columns x channels x 2)."""
    _, h, w, c = shape
    sizes = []
    for size, k, s, d in zip((h, w), kernel, stride, dilation):
        window = (k - 1) * d + 1
        out = -(-size // s) if padding == "SAME" else (size - window) // s + 1
        sizes.append(max(size + max((out - 1) * s + window - size, 0) // 2, (out - 1) * s + window))
    return sizes[0] * sizes[1] * c * 2


CASES = {
    # in-place AVX2 rows (even span), two batch images, a column tail
    "in-place": dict(input_shape=(2, 64, 40, 16), filters=24, kernel=(3, 3), stride=(1, 1), dilation=(1, 1),
                     padding="SAME"),
    # im2col rows: odd span, stride 2, dilated rows
    "im2col": dict(input_shape=(1, 50, 45, 15), filters=20, kernel=(3, 3), stride=(2, 2), dilation=(2, 1),
                   padding="VALID"),
    "groups": dict(input_shape=(1, 48, 40, 18), filters=12, kernel=(3, 3), stride=(1, 1), dilation=(1, 1),
                   padding="SAME", groups=2),
    # one output row per band: a row of the bordered image is over a third of the budget
    "one-row bands": dict(input_shape=(1, 5, 1030, 16), filters=8, kernel=(3, 3), stride=(1, 1),
                          dilation=(1, 1), padding="SAME"),
}


@pytest.mark.parametrize("level", simd_level_params())
@pytest.mark.parametrize("case", sorted(CASES))
def test_banded_conv_is_bit_exact(level, case):
    params = CASES[case]
    whole = whole_image_bytes(params["input_shape"], params["kernel"], params["stride"], params["dilation"],
                              params["padding"])
    assert whole > BAND_BYTES
    model = single_op_model("CONV_2D", per_channel=True, bias=True, input_zero_point=-128 if case != "groups" else 9,
                            out_zero_point=3, activation="RELU", seed=len(case), **params)
    graph = load_tflite(model)
    assert kernels.prepare(graph, graph.operators[0]).scratch_bytes < whole  # banded, not whole
    assert_bit_exact(model, seeds=(0,), levels=[level])


def test_a_mobilenet_v2_stem_fits_the_default_scratch_cap_and_runs_on_cmsis_nn():
    """224x224x3, 3x3 stride 2 to 32: its whole bordered image took 307,264 B of scratch, over the default
    256 KiB cap, so placement declined it; banded it stays near the budget and runs on cmsis-nn, bit-exact."""
    model = single_op_model("CONV_2D", input_shape=(1, 224, 224, 3), filters=32, kernel=(3, 3), stride=(2, 2),
                            padding="SAME", per_channel=True, activation="RELU6", seed=3)
    graph = load_tflite(model)
    scratch = kernels.prepare(graph, graph.operators[0]).scratch_bytes
    assert scratch <= BAND_BYTES + 4096, scratch
    module = tvmdevice.compile(model, "cmsis-nn, c")
    assert [p.device for p in module.placement.ops] == ["cmsis-nn"]
    x = np.random.default_rng(5).integers(-128, 128, size=(1, 224, 224, 3)).astype(np.int8)
    with module.executor() as ex:
        np.testing.assert_array_equal(ex.run([x])[0], tflm_run(model, [x]).output(0))
