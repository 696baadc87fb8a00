"""A PAD feeding a convolution folded into the convolution's window (``tvmdevice.aot.fold``): exactly
where TFLM's result cannot change, bit-exact with tflite-micro either way, the padded tensor gone
from the plan and the SRAM when folded."""

from __future__ import annotations

import numpy as np
import pytest
import tvmdevice
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.aot.memory_plan import tensor_key

from _run import tflm_run

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ZP = -5


def full_range(graph, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(np.iinfo(t.dtype).min, np.iinfo(t.dtype).max, size=t.shape, endpoint=True, dtype=t.dtype)
            for t in (graph.tensors[i] for i in graph.inputs)]


def compiled(model: bytes, target: str = "woofles, c", **kwargs):
    return tvmdevice.compile(model, target, **kwargs)


def assert_bit_exact(module, model: bytes, seeds=(0, 1)) -> None:
    """Every output equal to tflite-micro's."""
    with module.executor() as ex:
        for seed in seeds:
            inputs = full_range(module.graph, seed)
            out = ex.run(inputs)[0]
            np.testing.assert_array_equal(out, tflm_run(model, inputs).reshape(out.shape))


def folds(module) -> list[tuple[int, int]]:
    return [(f.pad, f.conv) for f in module.placement.folds]


def woofles_ram(module) -> int:
    return module.plan.pools["woofles"].size


def pad_conv(kind: str = "CONV_2D", paddings=((1, 1), (1, 1)), *, op: str = "PAD", value: int | None = None,
             padding: str = "VALID", stride: int = 1, dilation: int = 1, kernel: int = 3, dtype: str = "int8",
             shape=(1, 7, 6, 3), seed: int = 4) -> bytes:
    """input -> PAD/PADV2 (height and width borders) -> convolution -> output."""
    b = ModelBuilder(seed=seed)
    x = b.input(shape, scale=0.04 if dtype == "int8" else 0.0005, zero_point=ZP if dtype == "int8" else 0,
                dtype=dtype)
    pads = [[0, 0], list(paddings[0]), list(paddings[1]), [0, 0]]
    y = b.pad(x, pads) if op == "PAD" else b.padv2(x, pads, value)
    conv = dict(kernel=kernel, padding=padding, stride=stride, dilation=dilation)
    b.output(b.conv2d(y, filters=5, **conv) if kind == "CONV_2D" else b.depthwise_conv2d(y, **conv))
    return b.build()


# ------------------------------------------------------------------------------ folded
@pytest.mark.parametrize("kind", ["CONV_2D", "DEPTHWISE_CONV_2D"])
@pytest.mark.parametrize("paddings", [((1, 1), (1, 1)), ((2, 0), (0, 3)), ((0, 1), (2, 1))],
                         ids=["symmetric", "asymmetric", "one-sided"])
@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_a_pad_feeding_a_convolution_is_folded_bit_exact_and_frees_its_tensor(kind, paddings, padding):
    model = pad_conv(kind, paddings, padding=padding)
    module = compiled(model)
    assert folds(module) == [(0, 1)], module.placement
    pad, conv = module.placement.ops
    assert pad.is_folded and pad.call is None and pad.device == "(folded)"
    assert conv.device == "woofles" and conv.fold is pad.fold and conv.call.name.endswith("_s8")
    assert (conv.op_data.pad_h, conv.op_data.pad_w) == (pad.op_data.paddings[1][0] + (1 if padding == "SAME" else 0),
                                                        pad.op_data.paddings[2][0] + (1 if padding == "SAME" else 0))
    # The padded tensor has no buffer in any memory, and the schedule has one kernel step.
    padded = module.graph.operators[0].outputs[0]
    assert all(tensor_key(padded, m) not in p.block_of and tensor_key(padded, m) not in p.offsets
               for m, p in module.plan.pools.items())
    assert len([s for s in module.schedule.steps if hasattr(s, "op_index")]) == 1
    unfolded = compiled(model, "woofles -max_pad=0, c") if padding == "VALID" else \
        compiled(model, preserve_all_tensors=True)
    assert folds(unfolded) == [] and woofles_ram(module) < woofles_ram(unfolded)
    assert_bit_exact(module, model)
    assert_bit_exact(unfolded, model)
    assert "folded into #1" in str(module.placement) and "with PAD #0 folded in" in str(module.placement)


def test_the_folded_convolution_is_one_npu_kernel_call_per_run():
    model = pad_conv()
    module, unfolded = compiled(model), compiled(model, "woofles -max_pad=0, c")
    calls = []
    for m in (module, unfolded):
        with m.executor() as ex:
            ex.run(full_range(m.graph, 0))
            calls.append(int(ex.devices[0].fields["kernel_calls"][0]))
    assert calls == [1, 2]


def test_padv2_with_the_zero_point_as_its_constant_is_folded_and_another_constant_is_not():
    same = pad_conv(op="PADV2", value=ZP)
    other = pad_conv(op="PADV2", value=ZP + 1)
    assert folds(compiled(same)) == [(0, 1)]
    module = compiled(other)
    assert folds(module) == [] and [p.device for p in module.placement.ops] == ["woofles", "woofles"]
    assert_bit_exact(compiled(same), same)
    assert_bit_exact(module, other)


def test_int16_pad_feeding_an_int16_convolution_is_folded():
    model = pad_conv("CONV_2D", ((1, 2), (2, 1)), dtype="int16")
    module = compiled(model)
    assert folds(module) == [(0, 1)] and module.placement.ops[1].call.name == "tvmd_woofles_conv2d_s16"
    assert_bit_exact(module, model)


# -------------------------------------------------------------------------- not folded
def test_a_channel_pad_is_not_folded():
    b = ModelBuilder(seed=5)
    x = b.input((1, 5, 5, 2), scale=0.04, zero_point=ZP)
    b.output(b.conv2d(b.pad(x, [[0, 0], [1, 1], [1, 1], [0, 2]]), filters=3, kernel=3, padding="VALID"))
    model = b.build()
    module = compiled(model)
    assert folds(module) == [] and [p.device for p in module.placement.ops] == ["c", "woofles"]
    assert_bit_exact(module, model)


def test_a_pad_read_twice_is_not_folded():
    b = ModelBuilder(seed=6)
    x = b.input((1, 5, 5, 2), scale=0.04, zero_point=ZP)
    y = b.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]])
    b.output(b.add(b.conv2d(y, filters=2, kernel=3, padding="SAME"), y))
    model = b.build()
    module = compiled(model)
    assert folds(module) == [] and [p.device for p in module.placement.ops] == ["woofles"] * 3
    assert_bit_exact(module, model)


def test_a_pad_that_is_a_graph_output_is_not_folded():
    b = ModelBuilder(seed=7)
    x = b.input((1, 5, 5, 2), scale=0.04, zero_point=ZP)
    y = b.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]])
    b.output(b.conv2d(y, filters=2, kernel=3, padding="VALID"))
    b.output(y)
    model = b.build()
    module = compiled(model)
    assert folds(module) == [] and [p.device for p in module.placement.ops] == ["woofles", "woofles"]
    assert_bit_exact(module, model)


def test_preserving_every_tensor_keeps_the_pad_and_its_tensor_readable():
    model = pad_conv()
    module = compiled(model, preserve_all_tensors=True)
    assert folds(module) == []
    padded = module.graph.operators[0].outputs[0]
    inputs = full_range(module.graph, 0)
    with module.executor() as ex:
        ex.run(inputs)
        assert ex.tensor(padded).shape == (1, 9, 8, 3)
    with compiled(model).executor() as ex:
        ex.run(inputs)
        with pytest.raises(KeyError, match="folded into operator #1"):
            ex.tensor(padded)


def test_a_border_beyond_max_pad_leaves_the_pad_unfolded_and_says_why():
    model = pad_conv(paddings=((3, 0), (1, 1)))
    module = compiled(model, "woofles -max_pad=2, c")
    assert folds(module) == []
    conv = module.placement.ops[1]
    assert conv.device == "woofles"
    assert conv.declined == (("woofles", "fold of PAD #0: window border 3 exceeds the NPU limit -max_pad=2"),)
    assert_bit_exact(module, model)
    assert folds(compiled(model, "woofles -max_pad=3, c")) == [(0, 1)]


def test_a_convolution_on_another_device_does_not_fold():
    model = pad_conv()
    module = compiled(model, "woofles -max_channels=2, c")  # the 5-filter convolution goes to c
    assert folds(module) == [] and [p.device for p in module.placement.ops] == ["woofles", "c"]
    assert_bit_exact(module, model)


# ---------------------------------------------------------------------------- properties
@SETTINGS
@given(kind=st.sampled_from(["CONV_2D", "DEPTHWISE_CONV_2D"]), h=st.integers(1, 7), w=st.integers(1, 7),
       c=st.integers(1, 4), top=st.integers(0, 3), bottom=st.integers(0, 3), left=st.integers(0, 3),
       right=st.integers(0, 3), k=st.integers(1, 3), stride=st.integers(1, 3), dilation=st.integers(1, 2),
       padding=st.sampled_from(["SAME", "VALID"]), dtype=st.sampled_from(["int8", "int16"]), seed=st.integers(0, 99))
def test_folding_is_bit_exact_with_tflm(kind, h, w, c, top, bottom, left, right, k, stride, dilation, padding, dtype,
                                        seed):
    eff = (k - 1) * dilation + 1
    assume(padding == "SAME" or (eff <= h + top + bottom and eff <= w + left + right))
    model = pad_conv(kind, ((top, bottom), (left, right)), padding=padding, stride=stride, dilation=dilation,
                     kernel=k, dtype=dtype, shape=(1, h, w, c), seed=seed)
    module = compiled(model)
    assert folds(module) == [(0, 1)]
    assert_bit_exact(module, model, seeds=(seed,))
