"""What a kernel launch requires of the device (active, SRAM buffers) and what it costs (the cycle model)."""

from __future__ import annotations

import gc
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import single_op_model
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.errors import LifecycleError, Status, error_for_status
from tvmdevice.memory import address_of, aligned_empty
from tvmdevice.plugin import invoke_kernel

import tvmdevice_woofles
from tvmdevice_woofles import _woofles

from _devices import active_device
from _run import prepare, run_operator


def add_graph():
    return load_tflite(single_op_model("ADD", (1, 4, 4, 3), seed=1))


def alloc_operands(device, graph):
    op = graph.operators[0]
    return [device.alloc_data_space(graph.tensor(i).nbytes) for i in (*op.inputs, *op.outputs)]


@pytest.mark.parametrize("state", ["opened", "deactivated"])
def test_kernel_refused_unless_active(registry, make_device, state):
    graph = add_graph()
    device = make_device("opened" if state == "opened" else "active")
    if state == "deactivated":
        device.deactivate()
    call = prepare(registry, device, graph, graph.operators[0])
    status = invoke_kernel(call.kernel, call.params, alloc_operands(device, graph), device.handle_address)
    assert status == Status.INVALID_STATE
    assert isinstance(error_for_status(status, "launch"), LifecycleError)
    assert tvmdevice_woofles.counters(device)["kernel_calls"] == 0


def test_kernel_refuses_buffers_outside_the_sram(registry, device):
    graph = add_graph()
    call = prepare(registry, device, graph, graph.operators[0])
    buffers = alloc_operands(device, graph)
    host = np.zeros(64, np.int8)
    for k in range(3):
        bad = list(buffers)
        bad[k] = address_of(host)  # a host pointer is not a device address
        assert invoke_kernel(call.kernel, call.params, bad, device.handle_address) == Status.INVALID_ARGUMENT
    top = device.options["sram_kb"] * 1024 + 0x2000_0000
    bad = [buffers[0], buffers[1], top - 10]  # the output would run off the end of the SRAM
    assert invoke_kernel(call.kernel, call.params, bad, device.handle_address) == Status.INVALID_ARGUMENT
    assert invoke_kernel(call.kernel, call.params, buffers, device.handle_address) == Status.OK


def test_kernel_refuses_a_handle_that_is_not_a_woofles_device(registry, device):
    graph = add_graph()
    call = prepare(registry, device, graph, graph.operators[0])
    not_a_device = aligned_empty(device.handle.nbytes, 64)
    status = invoke_kernel(call.kernel, call.params, alloc_operands(device, graph), address_of(not_a_device))
    assert status == Status.INVALID_ARGUMENT


def test_kernel_launch_waits_for_queued_uploads(registry, device):
    graph = add_graph()
    call = prepare(registry, device, graph, graph.operators[0])
    a, b, out = alloc_operands(device, graph)
    ones = np.ones((1, 4, 4, 3), np.int8)
    device.upload(ones, a)
    device.upload(ones, b)
    pending = tvmdevice_woofles.counters(device)["dma_transfers"]
    assert invoke_kernel(call.kernel, call.params, [a, b, out], device.handle_address) == Status.OK
    assert tvmdevice_woofles.counters(device)["dma_transfers"] == pending + 2


def test_params_capsule_keeps_its_params_alive(registry, device):
    graph = load_tflite(single_op_model("CONV_2D", (1, 5, 5, 2), seed=4, filters=3))
    x = np.random.default_rng(4).integers(-128, 128, (1, 5, 5, 2)).astype(np.int8)
    expected = run_operator(registry, device, graph, [x])
    call = prepare(registry, device, graph, graph.operators[0])
    capsule = call.params.capsule
    del call
    gc.collect()
    op = graph.operators[0]
    addrs = {i: device.alloc_data_space(graph.tensor(i).nbytes) for i in (*op.inputs, *op.outputs)}
    for i in op.inputs:
        device.upload(graph.tensor(i).data if graph.tensor(i).is_constant else x, addrs[i])
    kernel = prepare(registry, device, graph, op).kernel
    # Only the capsule survived: it must still point at live parameters.
    assert invoke_kernel(kernel, capsule, [addrs[i] for i in (*op.inputs, *op.outputs)], device.handle_address) == 0
    out = np.empty(expected.shape, np.int8)
    np.testing.assert_array_equal(device.download(addrs[op.outputs[0]], out), expected)


# ----------------------------------------------------------------- the cycle model
TILE = _woofles.TILE_OVERHEAD
LAUNCH = _woofles.LAUNCH_CYCLES


#: The 16-bit datapath's cost factor (int16 lanes at half rate).
RATE16 = 2


def conv_cycles(g, mac, rate=1):
    n, oh, ow, oc = g.tensor(g.operators[0].outputs[0]).shape
    ic = g.tensor(g.operators[0].inputs[0]).shape[3]
    _, kh, kw, fic = g.tensor(g.operators[0].inputs[1]).shape
    groups = ic // fic
    return n * oh * ow * groups * math.ceil(oc // groups / mac) * (kh * kw * fic * rate + TILE) + LAUNCH


def depthwise_cycles(g, mac, rate=1):
    n, oh, ow, oc = g.tensor(g.operators[0].outputs[0]).shape
    _, kh, kw, _ = g.tensor(g.operators[0].inputs[1]).shape
    return n * oh * ow * math.ceil(oc / mac) * (kh * kw * rate + TILE) + LAUNCH


def fc_cycles(g, mac, rate=1):
    units, depth = g.tensor(g.operators[0].inputs[1]).shape
    batches = int(np.prod(g.tensor(g.operators[0].outputs[0]).shape[:-1]))
    return batches * math.ceil(units / mac) * (depth * rate + TILE) + LAUNCH


def pool_cycles(g, mac, rate=1):
    n, oh, ow, c = g.tensor(g.operators[0].outputs[0]).shape
    o = g.operators[0].options
    return n * oh * ow * math.ceil(c / mac) * (o["filter_height"] * o["filter_width"] * rate + TILE) + LAUNCH


def add_cycles(g, mac, rate=1):
    total = int(np.prod(g.tensor(g.operators[0].outputs[0]).shape))
    return math.ceil(total / mac) * 3 * rate + TILE + LAUNCH


def pad_cycles(g, mac):
    # The window loader moves mac_width bytes of one output pixel per cycle.
    out = g.tensor(g.operators[0].outputs[0])
    pixel = out.shape[-1] * np.dtype(out.dtype).itemsize
    return int(np.prod(out.shape[:-1])) * math.ceil(pixel / mac) + TILE + LAUNCH


def _int16(model):
    return lambda g, mac: model(g, mac, RATE16)


I16 = dict(input_dtype="int16", input_scale=0.0005)
PADS = [[0, 0], [2, 1], [1, 3], [0, 0]]
CASES = {
    "CONV_2D": (dict(input_shape=(2, 6, 5, 4), filters=10, kernel=(3, 2), groups=2), conv_cycles),
    "DEPTHWISE_CONV_2D": (dict(input_shape=(1, 7, 7, 5), depth_multiplier=2, stride=2), depthwise_cycles),
    "FULLY_CONNECTED": (dict(input_shape=(3, 50), units=70), fc_cycles),
    "AVERAGE_POOL_2D": (dict(input_shape=(1, 9, 9, 20), pool=3, stride=2, padding="SAME"), pool_cycles),
    "MAX_POOL_2D": (dict(input_shape=(1, 8, 8, 3), pool=2), pool_cycles),
    "ADD": (dict(input_shape=(1, 5, 5, 7)), add_cycles),
    "PAD": (dict(input_shape=(1, 5, 4, 70), paddings=PADS), pad_cycles),
    "PAD:int16": (dict(input_shape=(2, 3, 4, 33), paddings=PADS, input_dtype="int16"), pad_cycles),
    "CONV_2D:int16": (dict(I16, input_shape=(2, 6, 5, 4), filters=10, kernel=(3, 2), groups=2), _int16(conv_cycles)),
    "DEPTHWISE_CONV_2D:int16": (dict(I16, input_shape=(1, 7, 7, 5), depth_multiplier=2, stride=2),
                                _int16(depthwise_cycles)),
    "FULLY_CONNECTED:int16": (dict(I16, input_shape=(3, 50), units=70), _int16(fc_cycles)),
    "AVERAGE_POOL_2D:int16": (dict(I16, input_shape=(1, 9, 9, 20), pool=3, stride=2, padding="SAME"),
                              _int16(pool_cycles)),
    "MAX_POOL_2D:int16": (dict(I16, input_shape=(1, 8, 8, 3), pool=2), _int16(pool_cycles)),
    "ADD:int16": (dict(I16, input_shape=(1, 5, 5, 7)), _int16(add_cycles)),
}


@settings(max_examples=30, deadline=None)
@given(case=st.sampled_from(sorted(CASES)), mac_width=st.integers(1, 80))
def test_kernel_cycles_follow_the_documented_model(registry, case, mac_width):
    params, model = CASES[case]
    graph = load_tflite(single_op_model(case.partition(":")[0], **params))
    inputs = [np.zeros(graph.tensor(i).shape, graph.tensor(i).dtype) for i in graph.inputs]
    with active_device(registry, mac_width=mac_width) as device:
        run_operator(registry, device, graph, inputs)
        c = tvmdevice_woofles.counters(device)
    expected = model(graph, mac_width)
    assert c["kernel_cycles"] == expected
    assert c["kernel_calls"] == 1
    # The run's total: the wake-up, every DMA transfer, and the kernel.
    assert c["cycles_run"] == _woofles.WAKE_CYCLES + c["dma_cycles"] + expected
    assert c["estimated_us_run"] == pytest.approx(c["cycles_run"] / device.options["clock_mhz"])


def test_last_call_counter_is_the_kernel_after_a_launch(registry, device):
    graph = add_graph()
    call = prepare(registry, device, graph, graph.operators[0])
    buffers = alloc_operands(device, graph)
    assert invoke_kernel(call.kernel, call.params, buffers, device.handle_address) == 0
    assert tvmdevice_woofles.counters(device)["cycles_last_call"] == add_cycles(graph, 64)


def test_absent_optional_bias_is_a_null_buffer(registry, device):
    """An operator whose bias input is present but ABSENT (-1) gets NULL in the bias slot."""
    from tvmdevice.ir import ABSENT
    from tvmdevice.testing.reference import run_graph

    for op_type, params in (("CONV_2D", dict(filters=5)), ("FULLY_CONNECTED", dict(units=6))):
        shape = (1, 4, 4, 3) if op_type == "CONV_2D" else (2, 9)
        graph = load_tflite(single_op_model(op_type, shape, seed=5, bias=False, **params))
        op = graph.operators[0]
        op.inputs = (*op.inputs, ABSENT)
        x = np.random.default_rng(5).integers(-128, 128, shape).astype(np.int8)
        np.testing.assert_array_equal(run_operator(registry, device, graph, [x]),
                                      run_graph(graph, [x])[graph.outputs[0]])
