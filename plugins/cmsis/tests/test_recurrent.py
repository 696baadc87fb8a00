"""SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM on cmsis-nn: bit-exact with tflite-micro run after run, the
state carried like TFLM's variable tensors.

Each model (the builder's, laid out as the TFLite converter does) runs several consecutive times in one
TFLM interpreter and on cmsis-nn through the executor; every output and the activation state after each
run must match.  hypothesis draws the shapes, rank, memory, state type and zero points (SVDF); the
shape, units, time-major layout, int8 or int16 activations, cell clip, zero point and cell scale (LSTM).
"""

from __future__ import annotations

import numpy as np
import pytest
import tvmdevice
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tvmdevice import ops
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.errors import ModelError, Refusal

runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")

RUNS = 4


def svdf_model(batches: int, n_input: int, units: int, rank: int, memory: int, state: str, seed: int,
               zero_point: int = 0, state_zero_point: int = 0) -> bytes:
    b = ModelBuilder(seed=seed)
    x = b.input((batches, n_input), scale=0.04, zero_point=zero_point)
    b.output(b.svdf(x, units, rank=rank, memory=memory, state=state, state_zero_point=state_zero_point))
    return b.build()


def lstm_model(shape: tuple[int, int, int], units: int, *, time_major: bool, int16: bool, cell_clip: float,
               seed: int, zero_point: int, cell_scale_power: int) -> bytes:
    b = ModelBuilder(seed=seed)
    x = b.input(shape, scale=1 / 4096, dtype="int16") if int16 else b.input(shape, scale=0.03, zero_point=zero_point)
    b.output(b.lstm(x, units, time_major=time_major, cell_clip=cell_clip,
                    out_zero_point=0 if int16 else zero_point // 3, cell_scale_power=cell_scale_power))
    return b.build()


def _runs(graph, seed: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(RUNS):
        run = []
        for i in graph.inputs:
            t = graph.tensors[i]
            info = np.iinfo(t.dtype)
            run.append(rng.integers(info.min, info.max + 1, size=t.shape, dtype=np.int64).astype(t.dtype))
        out.append(run)
    return out


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


def check_on_cmsis(model: bytes, seed: int, target: str = "cmsis-nn, c", kernel: str = "tvmd_cmsis_svdf_s8") -> int:
    """Run ``model`` RUNS times on cmsis-nn and in TFLM; outputs and state must match after every run."""
    graph = load_tflite(model)
    watched = [*graph.outputs, *(t.index for t in graph.tensors if t.is_variable)]
    runs = _runs(graph, seed)
    expected = _tflm(model, runs, watched)
    module = tvmdevice.compile(model, target, strict=True)
    assert [(p.device, p.call.name) for p in module.placement.ops] == [("cmsis-nn", kernel)]
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


LSTM = "tvmd_cmsis_lstm_unidirectional"


@settings(max_examples=40, deadline=None)
@given(shape=st.tuples(st.integers(1, 3), st.integers(1, 5), st.integers(1, 12)), units=st.integers(1, 10),
       time_major=st.booleans(), int16=st.booleans(), cell_clip=st.sampled_from([0.0, 1.5, 3.0]),
       zero_point=st.integers(-20, 20), cell_scale_power=st.sampled_from([-11, -12, -13, -14]),
       seed=st.integers(0, 100))
def test_lstm_matches_tflm_run_after_run(shape, units, time_major, int16, cell_clip, zero_point, cell_scale_power,
                                         seed):
    try:  # only what TFLM's Prepare refuses (the operator layer says so) is skipped
        model = lstm_model(shape, units, time_major=time_major, int16=int16, cell_clip=cell_clip, seed=seed,
                           zero_point=zero_point, cell_scale_power=cell_scale_power)
        graph = load_tflite(model)
        ops.analyze(graph, graph.operators[0])
    except (ModelError, ValueError, Refusal):
        assume(False)
    assert check_on_cmsis(model, seed, kernel=LSTM) > 0


@pytest.mark.parametrize("mcpu", ["", "cortex-m55"])
def test_svdf_runs_with_either_packing(mcpu):
    model = svdf_model(2, 10, 4, 2, 6, "int16", seed=4, zero_point=-3)
    assert check_on_cmsis(model, 1, target=f"cmsis-nn -mcpu={mcpu}, c" if mcpu else "cmsis-nn, c") > 0


def _lstm_s8() -> bytes:
    return lstm_model((2, 3, 6), 5, time_major=False, int16=False, cell_clip=2.0, seed=4, zero_point=5,
                      cell_scale_power=-11)


def _lstm_s16() -> bytes:
    return lstm_model((2, 3, 6), 5, time_major=True, int16=True, cell_clip=0.0, seed=4, zero_point=0,
                      cell_scale_power=-11)


def _svdf() -> bytes:
    return svdf_model(2, 10, 4, 2, 6, "int16", seed=4, zero_point=-3)


@pytest.mark.parametrize("make", [_svdf, _lstm_s8, _lstm_s16], ids=["svdf", "lstm-s8", "lstm-s16"])
@pytest.mark.parametrize("cpu", ["host", "cortex-m55", "cortex-m4"])
def test_recurrent_exported_starts_from_the_reset_state_like_tflm(tmp_path, cpu, make):
    """The C export's run starts from the reset state (its warm-up leaves no trace): TFLM's first run."""
    from tvmdevice import firmware
    from tvmdevice.export import run_export

    try:
        the_cpu = firmware.get_cpu(cpu)
        firmware.find_toolchain(the_cpu)
        if not the_cpu.is_host:
            firmware.find_qemu(the_cpu)
    except firmware.ToolchainMissingError as exc:
        pytest.skip(str(exc))
    model = make()
    module = tvmdevice.compile(model, "cmsis-nn -mcpu=cortex-m55, c", strict=True)
    assert module.placement.ops[0].device == "cmsis-nn"
    out = module.export(tmp_path / "export")
    inputs = _runs(module.graph, 3)[0]
    got = run_export(out, cpu, inputs)
    want = _tflm(model, [inputs], list(module.graph.outputs))[0][module.graph.outputs[0]]
    np.testing.assert_array_equal(got.outputs[0].reshape(-1), want)
