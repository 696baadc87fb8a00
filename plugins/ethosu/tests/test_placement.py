"""Placement by Vela's rules: Vela's reasons for what it leaves to the CPU, the stream check for the rest."""

from __future__ import annotations

from tvmdevice.aot.builder import single_op_model
from tvmdevice.aot.frontend import load_tflite

from tvmdevice_ethosu.device import DEVICE_TYPE
from tvmdevice_ethosu.placement import check_operator
from tvmdevice_ethosu.submodel import write_model
from tvmdevice_ethosu.vela_compile import compile_raw

OPTIONS = DEVICE_TYPE.default_options()


def _only_op(model: bytes):
    graph = load_tflite(model)
    return graph, graph.operators[0]


def test_an_operator_vela_leaves_to_the_cpu_is_declined_with_vela_s_reason():
    graph, op = _only_op(single_op_model("LOG_SOFTMAX"))
    reason = check_operator(OPTIONS, graph, op)
    assert reason is not None and reason.startswith("Vela leaves it to the CPU: ") and "LOG_SOFTMAX" in reason


def test_an_operator_whose_options_cannot_be_written_is_declined_saying_so():
    graph, op = _only_op(single_op_model("SVDF"))
    assert check_operator(OPTIONS, graph, op) == "cannot be handed to Vela: SVDF's options cannot be written for Vela"


def test_an_operator_vela_places_passes_the_check():
    graph, op = _only_op(single_op_model("CONV_2D"))
    assert check_operator(OPTIONS, graph, op) is None


def test_a_written_operator_compiles_as_the_original_model():
    # The submodel writer hands Vela the same operator: the same command stream and weights.
    model = single_op_model("DEPTHWISE_CONV_2D", (1, 6, 6, 4), stride=2, padding="SAME")
    graph, op = _only_op(model)
    written = write_model(graph, [op], [graph.inputs[0]], op.outputs)
    a, _ = compile_raw(model, OPTIONS)
    b, _ = compile_raw(written, OPTIONS)
    assert bytes(a.command_stream) == bytes(b.command_stream)
    assert bytes(a.read_only.data) == bytes(b.read_only.data)




def test_a_padv2_vela_would_crash_on_is_declined_without_calling_it():
    # measured: Vela 5.2.0's compiler core dies with SIGSEGV on a PADV2 without its constant-values input
    graph = load_tflite(single_op_model("PADV2", (1, 4), paddings=[[0, 0], [1, 1]], value=3), name="padv2")
    (op,) = graph.operators
    assert check_operator(DEVICE_TYPE.default_options(), graph, op) is None
    op.inputs = op.inputs[:2]
    reason = check_operator(DEVICE_TYPE.default_options(), graph, op)
    assert reason == "cannot be handed to Vela: Vela 5.2.0 crashes on a PADV2 without its constant-values input"


def test_a_broadcast_across_more_than_four_dimensions_stays_off_the_npu():
    # Vela lowers it to 4-D feature maps whose broadcast is not TFLite's (measured: 96 of 144 values differ)
    graph, op = _only_op(single_op_model("SUB", input_shape=(2, 3, 4, 2, 3), input2_shape=(3, 1, 1, 3)))
    reason = check_operator(OPTIONS, graph, op)
    assert reason is not None and "[2, 3, 4, 2, 3] and [3, 1, 1, 3] across more than 4 dimensions" in reason
    for shapes in (dict(input_shape=(2, 3, 4, 2, 3), input2_shape=(2, 3, 4, 2, 3)),  # rank 5, no broadcast
                   dict(input_shape=(3, 4, 2, 3), input2_shape=(3, 1, 1, 3))):  # a broadcast in 4-D
        graph, op = _only_op(single_op_model("SUB", **shapes))
        assert check_operator(OPTIONS, graph, op) is None, shapes
