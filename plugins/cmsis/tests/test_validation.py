"""Bad input is a clear error before any C runs, never a crash."""

from __future__ import annotations

import numpy as np
import pytest
import tvmdevice
from tvmdevice.errors import InvalidArgumentError, LifecycleError, ModelError, NotSupportedError
from tvmdevice.ir import Quantization
from tvmdevice.kernel import PreparedCall
from tvmdevice.ops import analyze
from tvmdevice.plugin import invoke_kernel

from tvmdevice_cmsis import kernels
from tvmdevice_cmsis.runner import GraphRunner

from conftest import op_arrays, random_inputs, single


def conv_graph(**params):
    _, graph = single("CONV_2D", input_shape=(1, 6, 6, 3), filters=4, kernel=(3, 3), **params)
    return graph


def refusal(graph) -> str | None:
    """Why the operator cannot run on cmsis-nn (None: its prepare hook accepts it).

    The operator layer's analysis comes first, as in placement; then the
    plugin's prepare hook decides.
    """
    registry = tvmdevice.get_registry()
    dtype = registry.device_type("cmsis-nn")
    op = graph.operators[0]
    try:
        registry.prepare_operator(dtype, dtype.default_options(), graph, op, analyze(graph, op))
    except (NotSupportedError, ModelError) as exc:
        return str(exc)
    return None


def requant(tensor, scale=None, zero_point=None):
    q = tensor.quant
    tensor.quant = Quantization(np.array([scale if scale is not None else q.scale[0]], np.float32),
                                np.array([zero_point if zero_point is not None else q.zero_point[0]]), 0)


# ------------------------------------------------------------------ prepare
def test_supported_operator_is_accepted():
    assert refusal(conv_graph()) is None


@pytest.mark.parametrize("mutate, error, reason", [
    (lambda g: setattr(g.tensor(g.operators[0].inputs[1]), "data", None), NotSupportedError, "not constant"),
    (lambda g: requant(g.tensor(g.operators[0].inputs[0]), zero_point=200), InvalidArgumentError, "zero point"),
    (lambda g: g.operators[0].options.update(stride_h=0), InvalidArgumentError, "stride_h"),
    (lambda g: g.operators[0].options.update(dilation_w_factor=-1), InvalidArgumentError, "dilation_w_factor"),
    (lambda g: g.operators[0].options.update(padding="REFLECT"), NotSupportedError, "padding"),
    (lambda g: g.operators[0].options.update(fused_activation="TANH"), NotSupportedError, "activation"),
    (lambda g: setattr(g.tensor(g.operators[0].outputs[0]), "shape", (1, 6, 6, 5)), InvalidArgumentError,
     "output tensor"),
    (lambda g: setattr(g.tensor(g.operators[0].inputs[0]), "shape", (1, 2, 2, 3)), InvalidArgumentError,
     "does not fit"),
    (lambda g: setattr(g.tensor(g.operators[0].inputs[0]), "dtype", np.dtype(np.int16)), NotSupportedError,
     "int8"),
    (lambda g: requant(g.tensor(g.operators[0].outputs[0]), scale=1e-20), NotSupportedError, "rescale factor"),
    (lambda g: g.operators[0].options.pop("stride_w"), InvalidArgumentError, "stride_w"),
])
def test_conv_refusals(mutate, error, reason):
    graph = conv_graph(padding="VALID")
    mutate(graph)
    with pytest.raises(error, match=reason):
        kernels.prepare(graph, graph.operators[0])
    assert reason in refusal(graph)


def test_per_channel_scales_on_the_wrong_axis_are_refused():
    graph = conv_graph(per_channel=True)
    filt = graph.tensor(graph.operators[0].inputs[1])
    filt.quant = Quantization(filt.quant.scale, filt.quant.zero_point, axis=3)
    assert "axis" in refusal(graph)


def test_accumulator_overflow_is_refused():
    _, graph = single("FULLY_CONNECTED", input_shape=(1, 70000), units=1)
    weights = graph.tensor(graph.operators[0].inputs[1])
    weights.data = np.full(weights.shape, 127, dtype=np.int8)
    with pytest.raises(NotSupportedError, match="overflow"):
        kernels.prepare(graph, graph.operators[0])


def test_softmax_output_quantization_is_checked():
    _, graph = single("SOFTMAX")
    requant(graph.tensor(graph.operators[0].outputs[0]), scale=1.0 / 128)
    assert "1/256" in refusal(graph)


def test_broadcasting_beyond_tflm_rank_is_refused():
    _, graph = single("MUL", input_shape=(2, 1, 2, 1), input2_shape=(1, 2, 1, 2))
    assert refusal(graph) is None
    for t in graph.tensors:  # one more dimension: beyond TFLM's 4-D broadcast
        t.shape = (1, *t.shape)
    assert "4 dimensions" in refusal(graph)


def test_operators_without_kernels_are_refused():
    _, graph = single("RESHAPE")
    assert "no RESHAPE kernel" in refusal(graph)
    with pytest.raises(NotSupportedError):
        kernels.prepare(graph, graph.operators[0])


# ---------------------------------------------------------------------- run
@pytest.fixture
def prepared():
    graph = conv_graph(bias=True)
    call = kernels.prepare(graph, graph.operators[0])
    return call, op_arrays(graph, random_inputs(graph, 0))


def _replace(arrays, k, value):
    arrays = list(arrays)
    arrays[k] = value
    return arrays


@pytest.mark.parametrize("bad, reason", [
    (lambda a: a[:-1], "expected 4 buffers"),
    (lambda a: _replace(a, 0, a[0].astype(np.int16)), "must be int8"),
    (lambda a: _replace(a, 0, a[0].reshape(-1)[:-1].copy()), "must hold"),
    (lambda a: _replace(a, 0, np.asfortranarray(a[0].reshape(6, 18))), "C-contiguous"),
    (lambda a: _replace(a, 2, None), "bias buffer must be a numpy array"),
    (lambda a: _replace(a, 0, [1, 2, 3]), "numpy array"),
    (lambda a: _replace(a, 3, _readonly(a[3])), "read-only"),
])
def test_bad_buffers_are_refused(prepared, bad, reason):
    call, arrays = prepared
    with pytest.raises(InvalidArgumentError, match=reason):
        kernels.run(call, bad(arrays))


def _readonly(a):
    a = a.copy()
    a.flags.writeable = False
    return a


def test_output_overlapping_an_input_is_refused():
    _, graph = single("ADD")
    call = kernels.prepare(graph, graph.operators[0])
    arrays = op_arrays(graph, random_inputs(graph, 0))
    with pytest.raises(InvalidArgumentError, match="overlaps"):
        kernels.run(call, arrays[:2] + [arrays[0]])


def test_absent_bias_slot_must_be_none():
    _, graph = single("CONV_2D")
    op = graph.operators[0]
    op.inputs = (*op.inputs[:2], -1)
    call = kernels.prepare(graph, op)
    arrays = op_arrays(graph, random_inputs(graph, 0))
    kernels.run(call, arrays)  # None is accepted
    with pytest.raises(InvalidArgumentError, match="must be None"):
        kernels.run(call, _replace(arrays, 2, np.zeros(4, np.int32)))


def test_scratch_too_small_is_refused(prepared):
    call, arrays = prepared
    with pytest.raises(InvalidArgumentError, match="scratch"):
        kernels.run(call, arrays, scratch=np.zeros(call.scratch_bytes - 1, np.uint8))


def test_foreign_params_and_devices_are_refused(prepared):
    call, arrays = prepared
    with pytest.raises(InvalidArgumentError, match="not a cmsis-nn prepared call"):
        kernels.run(PreparedCall("x", call.kernel, params=object()), arrays)
    host = tvmdevice.get_registry().create_device("c")
    with pytest.raises(InvalidArgumentError, match="cmsis-nn device"):
        kernels.run(call, arrays, device=host)


def test_c_kernel_checks_the_params_kind(prepared):
    """Defence in depth: a params struct of another family is refused by the C kernel itself."""
    call, arrays = prepared
    _, graph = single("SOFTMAX")
    softmax = kernels.prepare(graph, graph.operators[0])
    status = invoke_kernel(call.kernel, softmax.params, [0, 0, 0, 0, 0], 0)
    assert status == 4  # TVMD_ERR_INVALID_ARGUMENT, before any buffer is touched


def test_runner_reports_the_failing_kernel():
    _, graph = single("FULLY_CONNECTED")
    device = tvmdevice.get_registry().create_device("cmsis-nn")
    device.init()
    device.open()
    runner = GraphRunner(graph, device)
    with pytest.raises(LifecycleError, match="tvmd_cmsis_fully_connected_s8"):
        runner.run(random_inputs(graph, 0))
    runner.close()
    device.release()
