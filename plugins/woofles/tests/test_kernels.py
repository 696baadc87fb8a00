"""Kernels bit-exact with TensorFlow Lite Micro and the host reference, on generated single-operator models."""

from __future__ import annotations

import numpy as np
import pytest
from _models import declared_model
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import single_op_model
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.testing.reference import run_graph

from tvmdevice_woofles.device import OPERATORS as WOOFLES_OPERATORS

from _devices import active_device
from _run import run_operator, tflm_run

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ACTIVATIONS = st.sampled_from(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
PADDING = st.sampled_from(["SAME", "VALID"])
# Lane counts that exercise partial tiles, single-lane arrays and wide ones.
MAC_WIDTH = st.sampled_from([1, 3, 8, 64, 256])
ZERO_POINT = st.integers(-128, 127)
SCALE = st.floats(0.005, 0.2)


def out_len(padding: str, size: int, k: int, stride: int, dilation: int = 1) -> int:
    if padding == "SAME":
        return -(-size // stride)
    return (size - ((k - 1) * dilation + 1)) // stride + 1


def check_bit_exact(registry, model: bytes, mac_width: int, seed: int) -> None:
    """Run the model's single operator on woofles, on the host reference and in TFLM; all must agree."""
    graph = load_tflite(model)
    rng = np.random.default_rng(seed)
    inputs = [rng.integers(-128, 128, graph.tensor(i).shape, dtype=np.int64).astype(np.int8) for i in graph.inputs]
    host = run_graph(graph, inputs)[graph.outputs[0]]
    tflm = tflm_run(model, inputs)
    with active_device(registry, mac_width=mac_width) as device:
        woofles = run_operator(registry, device, graph, inputs)
    np.testing.assert_array_equal(tflm, host)  # the oracles agree with each other
    np.testing.assert_array_equal(woofles, tflm)


@SETTINGS
@given(n=st.integers(1, 2), h=st.integers(1, 9), w=st.integers(1, 9), groups=st.integers(1, 2),
       c_per_group=st.integers(1, 5), f_per_group=st.integers(1, 9), kh=st.integers(1, 4), kw=st.integers(1, 4),
       stride=st.integers(1, 3), dilation=st.integers(1, 2), padding=PADDING, activation=ACTIVATIONS,
       per_channel=st.booleans(), bias=st.booleans(), zp=ZERO_POINT, scale=SCALE, mac_width=MAC_WIDTH,
       seed=st.integers(0, 2**16))
def test_conv2d(registry, n, h, w, groups, c_per_group, f_per_group, kh, kw, stride, dilation, padding,
                activation, per_channel, bias, zp, scale, mac_width, seed):
    assume(out_len(padding, h, kh, stride, dilation) > 0 and out_len(padding, w, kw, stride, dilation) > 0)
    model = single_op_model("CONV_2D", (n, h, w, groups * c_per_group), input_scale=scale, input_zero_point=zp,
                            seed=seed, filters=groups * f_per_group, kernel=(kh, kw), stride=stride,
                            dilation=dilation, padding=padding, activation=activation, per_channel=per_channel,
                            bias=bias, groups=groups)
    check_bit_exact(registry, model, mac_width, seed)


@SETTINGS
@given(h=st.integers(1, 9), w=st.integers(1, 9), c=st.integers(1, 6), multiplier=st.integers(1, 3),
       kh=st.integers(1, 4), kw=st.integers(1, 4), stride=st.integers(1, 3), dilation=st.integers(1, 2),
       padding=PADDING, activation=ACTIVATIONS, per_channel=st.booleans(), bias=st.booleans(), zp=ZERO_POINT,
       scale=SCALE, mac_width=MAC_WIDTH, seed=st.integers(0, 2**16))
def test_depthwise_conv2d(registry, h, w, c, multiplier, kh, kw, stride, dilation, padding, activation,
                          per_channel, bias, zp, scale, mac_width, seed):
    assume(out_len(padding, h, kh, stride, dilation) > 0 and out_len(padding, w, kw, stride, dilation) > 0)
    model = single_op_model("DEPTHWISE_CONV_2D", (1, h, w, c), input_scale=scale, input_zero_point=zp, seed=seed,
                            kernel=(kh, kw), depth_multiplier=multiplier, stride=stride, dilation=dilation,
                            padding=padding, activation=activation, per_channel=per_channel, bias=bias)
    check_bit_exact(registry, model, mac_width, seed)


@SETTINGS
@given(batch_shape=st.sampled_from([(1,), (3,), (2, 2)]), depth=st.integers(1, 40), units=st.integers(1, 20),
       per_channel=st.booleans(), bias=st.booleans(), activation=ACTIVATIONS, zp=ZERO_POINT, scale=SCALE,
       mac_width=MAC_WIDTH, seed=st.integers(0, 2**16))
def test_fully_connected(registry, batch_shape, depth, units, per_channel, bias, activation, zp, scale, mac_width,
                         seed):
    model = single_op_model("FULLY_CONNECTED", (*batch_shape, depth), input_scale=scale, input_zero_point=zp,
                            seed=seed, units=units, per_channel=per_channel, bias=bias, activation=activation)
    check_bit_exact(registry, model, mac_width, seed)


@SETTINGS
@given(op=st.sampled_from(["AVERAGE_POOL_2D", "MAX_POOL_2D"]), n=st.integers(1, 2), h=st.integers(1, 10),
       w=st.integers(1, 10), c=st.integers(1, 9), ph=st.integers(1, 4), pw=st.integers(1, 4),
       stride=st.integers(1, 3), padding=PADDING, activation=ACTIVATIONS, zp=ZERO_POINT, scale=SCALE,
       mac_width=MAC_WIDTH, seed=st.integers(0, 2**16))
def test_pooling(registry, op, n, h, w, c, ph, pw, stride, padding, activation, zp, scale, mac_width, seed):
    assume(out_len(padding, h, ph, stride) > 0 and out_len(padding, w, pw, stride) > 0)
    model = single_op_model(op, (n, h, w, c), input_scale=scale, input_zero_point=zp, seed=seed, pool=(ph, pw),
                            stride=stride, padding=padding, activation=activation)
    check_bit_exact(registry, model, mac_width, seed)


def broadcast_pair(draw) -> tuple[tuple[int, ...], tuple[int, ...]]:
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(rank))
    # The second input drops leading dimensions and/or collapses some to 1.
    keep = draw(st.integers(1, rank))
    other = tuple(1 if draw(st.booleans()) else d for d in shape[rank - keep:])
    return (shape, other) if draw(st.booleans()) else (other, shape)


@SETTINGS
@given(data=st.data(), zp1=ZERO_POINT, zp2=ZERO_POINT, s1=SCALE, s2=SCALE, out_scale=st.floats(0.01, 0.4),
       out_zp=ZERO_POINT, activation=ACTIVATIONS, mac_width=MAC_WIDTH, seed=st.integers(0, 2**16))
def test_add(registry, data, zp1, zp2, s1, s2, out_scale, out_zp, activation, mac_width, seed):
    shape1, shape2 = broadcast_pair(data.draw)
    model = single_op_model("ADD", shape1, input_scale=s1, input_zero_point=zp1, seed=seed, input2_shape=shape2,
                            input2_scale=s2, input2_zero_point=zp2, out_scale=out_scale, out_zero_point=out_zp,
                            activation=activation)
    check_bit_exact(registry, model, mac_width, seed)


def test_results_do_not_depend_on_the_mac_width(registry):
    model = single_op_model("CONV_2D", (1, 7, 7, 5), seed=3, filters=37, kernel=(3, 3), padding="SAME")
    graph = load_tflite(model)
    x = np.random.default_rng(3).integers(-128, 128, (1, 7, 7, 5)).astype(np.int8)
    outs = []
    for width in (1, 5, 16, 37, 256):
        with active_device(registry, mac_width=width) as device:
            outs.append(run_operator(registry, device, graph, [x]))
    for out in outs[1:]:
        np.testing.assert_array_equal(out, outs[0])


@pytest.mark.parametrize("key", sorted(WOOFLES_OPERATORS))
def test_kernel_names_follow_the_convention(registry, key):
    graph = load_tflite(declared_model(key))
    call = registry.prepare_operator(registry.device_type("woofles"), registry.device_type("woofles")
                                     .default_options(), graph, graph.operators[0])
    from tvmdevice.plugin import kernel_info

    name, _, _ = kernel_info(call.kernel)
    assert name == call.name and name.startswith("tvmd_woofles_")
    assert name.endswith("_s16" if key.endswith(":int16") else "_s8")
    assert call.scratch_bytes == 0


def test_the_kernel_table_holds_exactly_the_kernels_prepare_uses(registry):
    from tvmdevice_woofles import _woofles

    woofles = registry.device_type("woofles")
    used = set()
    for key in sorted(WOOFLES_OPERATORS):
        graph = load_tflite(declared_model(key))
        used.add(registry.prepare_operator(woofles, woofles.default_options(), graph, graph.operators[0]).name)
    # PAD's key covers int16 tensors too: its int16 kernel is prepared for an int16 PAD.
    graph = load_tflite(declared_model("PAD", input_dtype="int16"))
    used.add(registry.prepare_operator(woofles, woofles.default_options(), graph, graph.operators[0]).name)
    assert used == set(_woofles.KERNEL_NAMES)
    assert len(_woofles.KERNEL_NAMES) == len(used)  # each once
    with pytest.raises(KeyError, match="no woofles kernel named"):
        _woofles.kernel_capsule("tvmd_woofles_softmax_s8")


def test_the_readme_lists_every_kernel_and_kernel_key():
    from pathlib import Path

    from tvmdevice_woofles import _woofles

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    table = readme[readme.index("## Kernels"):readme.index("### PAD and the window loader")]
    for name in _woofles.KERNEL_NAMES:
        assert f"`{name}`" in table, name
    for key in WOOFLES_OPERATORS:
        assert key in table, key
