"""The arithmetic, activation and reduction operators, every option combination of
:mod:`arith_models`, on every installed device that claims the operator: every output bit-exact
with tflite-micro, and the numpy oracle (:mod:`tvmdevice.testing.reference`) too."""

from __future__ import annotations

import numpy as np
import pytest
from arith_models import BY_OPERATOR, CASES

import tvmdevice
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.testing import reference as kernels
from tvmdevice.testing.oracle import tflm_run


def _inputs(graph, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, size=graph.tensors[t].shape, dtype=np.int8) for t in graph.inputs]


def _claims() -> list[tuple[str, str]]:
    """(case, device) for every case and every installed device that declares its operator."""
    pairs = []
    for dtype in tvmdevice.get_registry().device_types():
        for op_type, keys in BY_OPERATOR.items():
            if op_type in dtype.operators:
                pairs += [(key, dtype.name) for key in keys]
    return sorted(pairs)


#: (case, device) -> what the device's refusal names: a limit of that device the case exceeds.
DECLINES = {
    ("maximum-broadcast-5d", "cmsis-nn"): "cmsis-nn's MAXIMUM takes 4 ([n, h, w, c])",
    ("maximum-broadcast-5d", "woofles"): "broadcast rank 5 exceeds the address generator's 4 dimensions",
}


def _run(model: bytes, device: str, seed: int) -> tuple[list[np.ndarray], list[np.ndarray], object]:
    target = device if device == "c" else f"{device}, c"
    module = tvmdevice.compile(model, target)
    placed = {p.device for p in module.placement.ops if not p.is_view}
    assert placed == {device}, f"placed on {placed}, not {device}: {module.placement}"
    inputs = _inputs(module.graph, seed)
    with module.executor() as ex:
        ex.check_plan()
        ours = ex.run(inputs)
    ref = tflm_run(model, inputs)
    return ours, [ref.output(k) for k in range(len(ours))], module


@pytest.mark.parametrize("case, device", _claims())
def test_bit_exact_with_tflite_micro(case, device):
    if (case, device) in DECLINES:
        module = tvmdevice.compile(CASES[case](0), f"{device}, c")
        reasons = [r for p in module.placement.ops for d, r in p.declined if d == device]
        assert reasons and DECLINES[case, device] in reasons[0], module.placement
        return
    for seed in (0, 1):
        ours, expected, _ = _run(CASES[case](seed), device, seed)
        for k, (a, b) in enumerate(zip(ours, expected)):
            np.testing.assert_array_equal(a.reshape(b.shape), b, err_msg=f"{case} on {device}, seed {seed}, output {k}")


@pytest.mark.parametrize("case", sorted(CASES))
def test_numpy_oracle_matches_tflite_micro(case):
    model = CASES[case](3)
    graph = load_tflite(model)
    inputs = _inputs(graph, 3)
    values = kernels.run_graph(graph, inputs)
    ref = tflm_run(model, inputs)
    for k, t in enumerate(graph.outputs):
        np.testing.assert_array_equal(values[t], ref.output(k).reshape(values[t].shape), err_msg=case)


def test_every_operator_of_the_issue_has_cases():
    assert set(BY_OPERATOR) == {
        "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "RELU", "RELU6", "LEAKY_RELU", "HARD_SWISH", "PRELU",
        "SUM", "REDUCE_MAX", "ARG_MAX", "ARG_MIN", "TRANSPOSE_CONV", "BATCH_MATMUL", "LOG_SOFTMAX"}


def test_woofles_transpose_conv_refusal_names_its_limit():
    if "woofles" not in set(tvmdevice.get_registry().device_names()):
        pytest.skip("woofles is not installed (pip install ./plugins/woofles)")
    model = CASES["transpose_conv-s3-no-bias"](0)  # a 4x4 filter, 5 output channels
    for option, reason in (("-max_kernel=3", "filter size 4 exceeds the NPU limit -max_kernel=3"),
                           ("-max_channels=4", "channel count 5 exceeds the NPU limit -max_channels=4")):
        module = tvmdevice.compile(model, f"woofles {option}, c")
        (p,) = [p for p in module.placement.ops if p.op_type == "TRANSPOSE_CONV"]
        assert p.device == "c" and any(d == "woofles" and reason in r for d, r in p.declined), module.placement
