"""Pooling over padding (NPU_OP_POOL with IFM_PAD_*): bit-exact with tflite-micro, and the field values
the functional model refuses for it."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_single_ops import run_and_compare
from test_stream import _cmd1_at, _words
from tvmdevice.aot.builder import single_op_model

from tvmdevice_ethosu.device import DEVICE_TYPE
from tvmdevice_ethosu.placement import stream_refusal
from tvmdevice_ethosu.vela_compile import compile_raw

_KINDS = ["AVERAGE_POOL_2D", "MAX_POOL_2D"]


@pytest.mark.parametrize("kind", _KINDS)
@pytest.mark.parametrize("pool, stride, shape", [
    ((3, 3), 1, (1, 5, 5, 4)), ((2, 2), 2, (1, 5, 5, 4)), ((5, 5), 1, (1, 6, 6, 3)), ((8, 8), 1, (1, 9, 9, 2)),
    ((3, 2), 3, (1, 10, 4, 17)), ((1, 4), 2, (1, 3, 7, 16)),
])
def test_padded_pooling_runs_on_the_npu_bit_exact(registry, kind, pool, stride, shape):
    # windows that cross the edge: the average divides by the elements inside the IFM, the max ignores the rest
    model = single_op_model(kind, shape, input_scale=0.05, input_zero_point=-7, padding="SAME", pool=pool,
                            stride=stride, seed=2)
    assert run_and_compare(registry, model, 2) == "ethos-u"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(_KINDS), h=st.integers(1, 12), w=st.integers(1, 12), c=st.sampled_from([1, 5, 16, 21]),
       pool=st.tuples(st.integers(1, 8), st.integers(1, 8)), stride=st.integers(1, 3),
       activation=st.sampled_from(["NONE", "RELU", "RELU6"]), zp=st.integers(-128, 127),
       scale=st.sampled_from([0.003, 0.05, 0.7, 2.5]), seed=st.integers(0, 99))
def test_padded_pooling(registry, kind, h, w, c, pool, stride, activation, zp, scale, seed):
    model = single_op_model(kind, (1, h, w, c), input_scale=scale, input_zero_point=zp, pool=pool, stride=stride,
                            padding="SAME", activation=activation, seed=seed)
    assert run_and_compare(registry, model, seed) == "ethos-u"


def _padded_average_stream() -> tuple[list[int], list[int]]:
    model = single_op_model("AVERAGE_POOL_2D", (1, 5, 5, 4), pool=(3, 3), stride=1, padding="SAME")
    compiled, _ = compile_raw(model, DEVICE_TYPE.default_options())
    regions = [len(bytes(compiled.read_only.data)), compiled.scratch.size, compiled.scratch_fast.size]
    return _words(bytes(compiled.command_stream)), regions


def test_vela_s_padded_average_has_the_unit_scale_and_a_scale_is_refused():
    # Vela leaves the division to the hardware ("padded average-pools use HW-scaling"): the OFM scale is 1;
    # how the hardware would combine another scale with its division is not defined publicly
    words, regions = _padded_average_stream()
    i = _cmd1_at(words, "NPU_SET_OFM_SCALE")
    assert (words[i] >> 16 & 0x3F, words[i + 1]) == (0, 1)
    assert stream_refusal(struct.pack(f"<{len(words)}I", *words), regions) is None
    words[i + 1] = 0x40000000
    reason = stream_refusal(struct.pack(f"<{len(words)}I", *words), regions)
    assert reason is not None, "a padded average pool with a scale ran"
    assert "NPU_OP_POOL with this OFM_SCALE (a padded average pool with a scale)" in reason, reason
