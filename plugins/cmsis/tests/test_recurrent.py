"""SVDF on cmsis-nn: bit-exact with tflite-micro run after run, state carried like TFLM's variable tensors.

Each model (the builder's, laid out as the TFLite converter does) runs several consecutive times in one
TFLM interpreter and on cmsis-nn through the executor; every output and the activation state after each
run must match.  hypothesis draws the shapes, rank, memory, state type and zero points.
"""

from __future__ import annotations

import numpy as np
import pytest
import tvmdevice
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.aot.frontend import load_tflite
from tvmdevice import ops
from tvmdevice.errors import ModelError, Refusal

runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")

RUNS = 4


def svdf_model(batches: int, n_input: int, units: int, rank: int, memory: int, state: str, seed: int,
               zero_point: int = 0, state_zero_point: int = 0) -> bytes:
    b = ModelBuilder(seed=seed)
    x = b.input((batches, n_input), scale=0.04, zero_point=zero_point)
    b.output(b.svdf(x, units, rank=rank, memory=memory, state=state, state_zero_point=state_zero_point))
    return b.build()


def _runs(graph, seed: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [[rng.integers(-128, 128, size=graph.tensors[i].shape, dtype=np.int64).astype(np.int8)
             for i in graph.inputs] for _ in range(RUNS)]


def _tflm(model: bytes, runs: list[list[np.ndarray]], tensors: list[int]) -> list[dict[int, np.ndarray]]:
    interp = runtime.Interpreter.from_bytes(model, arena_size=1 << 20,
                                            intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
    out = []
    for inputs in runs:
        for k, x in enumerate(inputs):
            interp.set_input(x, k)
        interp.invoke()
        out.append({t: np.asarray(interp.GetTensor(t, 0)["tensor_data"]).reshape(-1).copy() for t in tensors})
    return out


def check_on_cmsis(model: bytes, seed: int, target: str = "cmsis-nn, c") -> int:
    """Run ``model`` RUNS times on cmsis-nn and in TFLM; outputs and state must match after every run."""
    graph = load_tflite(model)
    watched = [*graph.outputs, *(t.index for t in graph.tensors if t.is_variable)]
    runs = _runs(graph, seed)
    expected = _tflm(model, runs, watched)
    module = tvmdevice.compile(model, target, strict=True)
    assert [(p.op_type, p.device, p.call.name) for p in module.placement.ops] == [
        ("SVDF", "cmsis-nn", "tvmd_cmsis_svdf_s8")]
    compared = 0
    with module.executor() as ex:
        for r, (inputs, want) in enumerate(zip(runs, expected)):
            outs = ex.run(inputs)
            got = {**{t: o.reshape(-1) for t, o in zip(graph.outputs, outs)},
                   **{t: ex.tensor(t).reshape(-1) for t in watched if t not in graph.outputs}}
            for t in watched:
                np.testing.assert_array_equal(got[t], want[t], err_msg=f"run {r}, tensor {t}")
                compared += got[t].size
    return compared


@settings(max_examples=40, deadline=None)
@given(batches=st.integers(1, 3), n_input=st.integers(1, 20), units=st.integers(1, 6), rank=st.integers(1, 3),
       memory=st.integers(1, 8), state=st.sampled_from(["int16", "int8"]), zero_point=st.integers(-128, 127),
       state_zero_point=st.integers(-20, 20), seed=st.integers(0, 100))
def test_svdf_matches_tflm_run_after_run(batches, n_input, units, rank, memory, state, zero_point, state_zero_point,
                                         seed):
    if state == "int16":
        state_zero_point = 0  # the converter's int16 state is symmetric
    try:  # only what TFLM's Prepare refuses (the operator layer says so) is skipped
        model = svdf_model(batches, n_input, units, rank, memory, state, seed, zero_point, state_zero_point)
        graph = load_tflite(model)
        ops.analyze(graph, graph.operators[0])
    except (ModelError, ValueError, Refusal):
        assume(False)
    assert check_on_cmsis(model, seed) > 0


@pytest.mark.parametrize("mcpu", ["", "cortex-m55"])
def test_svdf_runs_with_either_packing(mcpu):
    model = svdf_model(2, 10, 4, 2, 6, "int16", seed=4, zero_point=-3)
    assert check_on_cmsis(model, 1, target=f"cmsis-nn -mcpu={mcpu}, c" if mcpu else "cmsis-nn, c") > 0


@pytest.mark.parametrize("cpu", ["host", "cortex-m55", "cortex-m4"])
def test_svdf_exported_carries_state_like_tflm(tmp_path, cpu):
    """The C export runs the model twice (warm-up, measured run): its output is TFLM's second run."""
    from tvmdevice import firmware
    from tvmdevice.export import run_export

    try:
        the_cpu = firmware.get_cpu(cpu)
        firmware.find_toolchain(the_cpu)
        if not the_cpu.is_host:
            firmware.find_qemu(the_cpu)
    except firmware.ToolchainMissingError as exc:
        pytest.skip(str(exc))
    model = svdf_model(2, 10, 4, 2, 6, "int16", seed=4, zero_point=-3)
    module = tvmdevice.compile(model, "cmsis-nn -mcpu=cortex-m55, c", strict=True)
    assert module.placement.ops[0].device == "cmsis-nn"
    out = module.export(tmp_path / "export")
    inputs = _runs(module.graph, 3)[0]
    got = run_export(out, cpu, inputs)
    want = _tflm(model, [inputs, inputs], list(module.graph.outputs))[1][module.graph.outputs[0]]
    np.testing.assert_array_equal(got.outputs[0].reshape(-1), want)
