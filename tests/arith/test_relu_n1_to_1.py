"""RELU_N1_TO_1: TFLM registers no kernel for it (tflite-micro refuses the model), so its oracle is
LiteRT's int8 kernel (ReluPrepare + QuantizedReluX(-1, 1) in tensorflow/lite/kernels/activations.cc):
the host device ``c`` and the numpy oracle bit-exact with it, and the op data's bounds checked."""

from __future__ import annotations

import numpy as np
import pytest

import tvmdevice
from tvmdevice import ops
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.errors import Refusal
from tvmdevice.testing import reference as kernels
from tvmdevice.testing.oracle import litert_run, tflm_run


def _model(shape, s_in, z_in, s_out, z_out) -> bytes:
    b = ModelBuilder(name="relu_n1_to_1")
    b.output(b.relu_n1_to_1(b.input(shape, s_in, z_in), s_out, z_out))
    return b.build()


#: (input scale, input zero point, output scale, output zero point)
CASES = {
    "same-quantization": (0.02, 0, 0.02, 0),
    "rescale": (0.05, -7, 1 / 128, 0),
    "half-way-bound": (0.1, 3, 0.4, -20),        # 1 / 0.4 = 2.5: rounded away from zero to 3
    "coarse-output": (0.3, 10, 2.0, 5),           # the quantized +-1 round to +-1 (0.5 away from zero)
    "bounds-collapse": (0.05, 0, 10.0, 9),        # +-1 quantize to 0: the output is the zero point
    "clamped-low": (0.01, -50, 0.005, -120),      # -1 is below -128: clamped to the int8 range
    "clamped-high": (0.02, 40, 0.004, 100),       # +1 is above 127
    "input-coarser": (0.5, -128, 0.01, -3),
}


def _inputs(shape, seed: int) -> list[np.ndarray]:
    return [np.random.default_rng(seed).integers(-128, 128, size=shape, dtype=np.int8)]


def test_tflite_micro_has_no_kernel_for_it():
    with pytest.raises(RuntimeError):
        tflm_run(_model((2, 8), 0.02, 0, 0.02, 0), _inputs((2, 8), 0))


@pytest.mark.parametrize("case", sorted(CASES))
def test_host_device_and_numpy_oracle_bit_exact_with_litert(case):
    pytest.importorskip("ai_edge_litert")
    shape = (2, 3, 43)
    model = _model(shape, *CASES[case])
    module = tvmdevice.compile(model, "c")
    assert [p.device for p in module.placement.ops] == ["c"]
    for seed in (0, 1):
        inputs = _inputs(shape, seed)
        (expected,) = litert_run(model, inputs)
        with module.executor() as ex:
            (ours,) = ex.run(inputs)
        np.testing.assert_array_equal(ours.reshape(expected.shape), expected, err_msg=f"{case}, seed {seed}")
        graph = load_tflite(model)
        values = kernels.run_graph(graph, inputs)
        np.testing.assert_array_equal(values[graph.outputs[0]].reshape(expected.shape), expected, err_msg=case)
    # every int8 input value once: the whole transfer function
    every = [np.arange(-128, 128, dtype=np.int8).reshape(2, 128)]
    small = _model((2, 128), *CASES[case])
    with tvmdevice.compile(small, "c").executor() as ex:
        (ours,) = ex.run(every)
    np.testing.assert_array_equal(ours, litert_run(small, every)[0].reshape(ours.shape), err_msg=case)


def test_op_data_bounds_are_the_outputs_quantized_minus_one_and_one():
    graph = load_tflite(_model((4,), 0.1, 3, 0.4, -20))
    data = ops.analyze(graph, graph.operators[0])
    assert (data.act_min, data.act_max) == (-23, -17)  # -20 -+ round(2.5) = 3
    assert (data.input_offset, data.output_offset) == (3, -20)
    graph = load_tflite(_model((4,), 0.01, -50, 0.005, -120))
    data = ops.analyze(graph, graph.operators[0])
    assert (data.act_min, data.act_max) == (-128, 80)  # -120 -+ 200, clamped below to -128


def test_an_output_scale_putting_one_past_int32_is_refused_naming_the_operator():
    graph = load_tflite(_model((4,), 0.02, 0, 1e-12, 0))
    with pytest.raises(Refusal, match=r"RELU_N1_TO_1.*past int32"):
        ops.analyze(graph, graph.operators[0])
