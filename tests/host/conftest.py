"""Fixtures for the host kernel tests: a TensorFlow Lite Micro runner that
returns every tensor after one inference, and a whole-model comparison run
for the numpy oracle and for the ``c`` device's C kernels (``models_dir``
comes from the top-level conftest)."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest


def _arena_size(model: bytes) -> int:
    # TFLM's Python default (10x the model) is too small for tiny models.
    return max(1 << 20, 16 * len(model))


@pytest.fixture(scope="session")
def tflm_run() -> Callable[[bytes, list[np.ndarray], list[int]], dict[int, np.ndarray]]:
    """``tflm_run(model, inputs, tensor_indices)`` -> {index: flat array} after one invoke."""
    runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")

    def run(model: bytes, inputs: list[np.ndarray], tensors: list[int]) -> dict[int, np.ndarray]:
        interp = runtime.Interpreter.from_bytes(
            model, arena_size=_arena_size(model),
            intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
        for k, x in enumerate(inputs):
            interp.set_input(x, k)
        interp.invoke()
        return {t: np.asarray(interp.GetTensor(t, 0)["tensor_data"]).reshape(-1) for t in tensors}

    return run


def _random_inputs(graph, rng: np.random.Generator) -> list[np.ndarray]:
    # The whole int8 range; float32 inputs a few units wide.
    arrays = []
    for idx in graph.inputs:
        t = graph.tensors[idx]
        if t.dtype == np.float32:
            arrays.append(rng.normal(0.0, 4.0, size=t.shape).astype(np.float32))
        else:
            arrays.append(rng.integers(-128, 128, size=t.shape).astype(t.dtype))
    return arrays


def _run_on_device_c(graph, model: bytes, inputs: list[np.ndarray]) -> dict[int, np.ndarray]:
    """Every operator output of ``model`` run by the ``c`` device's C kernels through the executor."""
    import tvmdevice
    from tvmdevice.kernel import is_c_kernel

    module = tvmdevice.compile(model, "c", preserve_all_tensors=True)
    for p in module.placement.ops:
        # Views run nothing; everything else is a C kernel of the device.
        assert p.is_view or (p.device == "c" and is_c_kernel(p.call.kernel)), f"#{p.op_index} {p.op_type}"
    with module.executor() as ex:
        ex.check_plan()
        ex.run(inputs)
        return {t: ex.tensor(t) for op in graph.operators for t in op.outputs}


@pytest.fixture(scope="session", params=["numpy-oracle", "c-device"])
def compare_with_tflm(request, tflm_run):
    """``compare_with_tflm(model, seed)`` runs the model in TFLM and on the host
    on the same seeded inputs and returns ``(mismatches, n_tensors, n_values)``;
    ``mismatches`` lists (operator, tensor, max abs diff) for every operator
    output that differs.

    Two hosts, each test runs with both: ``numpy-oracle`` is the numpy
    reference :func:`tvmdevice.testing.reference.run_graph` (the oracle other
    devices are checked against); ``c-device`` is the ``c`` device, whose C
    kernels must equal TFLM and the numpy oracle alike."""
    from tvmdevice.aot.frontend import load_tflite
    from tvmdevice.testing.reference import run_graph

    def compare(model: bytes, seed: int = 0):
        graph = load_tflite(model)
        inputs = _random_inputs(graph, np.random.default_rng(seed))
        produced = [(op, t) for op in graph.operators for t in op.outputs]
        expected = tflm_run(model, inputs, [t for _, t in produced])
        oracle = run_graph(graph, inputs)
        ours = oracle if request.param == "numpy-oracle" else _run_on_device_c(graph, model, inputs)
        mismatches, n_values = [], 0
        for op, t in produced:
            a = ours[t].reshape(-1).astype(np.float64)
            n_values += a.size
            for name, ref in (("TFLM", expected[t]), ("the numpy oracle", oracle[t].reshape(-1))):
                b = ref.astype(np.float64)
                diff = np.inf if a.shape != b.shape else float(np.max(np.abs(a - b), initial=0.0))
                if diff != 0:
                    mismatches.append((f"operator {op.index} ({op.type}) vs {name}", t, diff))
        return mismatches, len(produced), n_values

    return compare
