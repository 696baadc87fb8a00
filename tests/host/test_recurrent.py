"""UNIDIRECTIONAL_SEQUENCE_LSTM and SVDF: builder models against tflite-micro, run after run.

Every model is made by the builder as the TFLite converter lays it out and
first run in tflite-micro (the oracle).  The ``c`` device (its C kernels,
through the executor) and the numpy oracle must give TFLM's output *and*
TFLM's state (the variable tensors) after each of several consecutive runs:
state persists across runs as in TFLM, and ``Executor.reset_state`` puts it
back where a new interpreter starts.
"""

from __future__ import annotations

import numpy as np
import pytest

import tvmdevice
from tvmdevice import ops
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.errors import ModelFormatError, PlacementError, Refusal
from tvmdevice.host import calls
from tvmdevice.testing.reference import prepare, run_graph
from tvmdevice.testing.reference.recurrent import SIGMOID_TABLE

runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")

RUNS = 4


def _inputs(graph, seed: int, runs: int = RUNS) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(runs):
        run = []
        for idx in graph.inputs:
            t = graph.tensors[idx]
            info = np.iinfo(t.dtype)
            run.append(rng.integers(info.min, info.max + 1, size=t.shape, dtype=np.int64).astype(t.dtype))
        out.append(run)
    return out


def _tflm(model: bytes, runs: list[list[np.ndarray]], tensors: list[int]) -> list[dict[int, np.ndarray]]:
    """Per run, the listed tensors after TFLM's invoke (one interpreter: state carried)."""
    interp = runtime.Interpreter.from_bytes(model, arena_size=1 << 20,
                                            intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
    out = []
    for inputs in runs:
        for k, x in enumerate(inputs):
            interp.set_input(x, k)
        interp.invoke()
        out.append({t: np.asarray(interp.GetTensor(t, 0)["tensor_data"]).reshape(-1).copy() for t in tensors})
    return out


def _watched(graph) -> list[int]:
    """The outputs and the state tensors."""
    return [*graph.outputs, *(t.index for t in graph.tensors if t.is_variable)]


def _check_c_device(model: bytes, seed: int = 0) -> int:
    """Run ``model`` RUNS times on the ``c`` device and in TFLM; every output and state must match.

    :returns: how many values were compared.
    """
    graph = load_tflite(model)
    runs = _inputs(graph, seed)
    watched = _watched(graph)
    expected = _tflm(model, runs, watched)
    module = tvmdevice.compile(model, "c")
    assert all(p.device == "c" and p.call.name.startswith(("lstm", "svdf")) for p in module.placement.ops)
    compared = 0
    with module.executor() as ex:
        ex.check_plan()
        for r, (inputs, want) in enumerate(zip(runs, expected)):
            outs = ex.run(inputs)
            got = {**{t: o.reshape(-1) for t, o in zip(graph.outputs, outs)},
                   **{t: ex.tensor(t).reshape(-1) for t in watched if t not in graph.outputs}}
            for t in watched:
                np.testing.assert_array_equal(got[t], want[t], err_msg=f"run {r}, tensor {t}")
                compared += got[t].size
    return compared


def _check_numpy_oracle(model: bytes, seed: int = 0) -> None:
    """The numpy oracle, state carried by hand from run to run, equals TFLM too."""
    graph = load_tflite(model)
    runs = _inputs(graph, seed)
    watched = _watched(graph)
    expected = _tflm(model, runs, watched)
    calls_ = [prepare(graph, op) for op in graph.operators]
    values = {t.index: np.full(t.shape, t.reset_value, t.dtype) for t in graph.tensors if t.is_variable}
    values.update({t.index: t.data for t in graph.tensors if t.data is not None})
    for inputs, want in zip(runs, expected):
        values.update(dict(zip(graph.inputs, inputs)))
        for op, call in zip(graph.operators, calls_):
            for i in op.outputs:
                values[i] = np.zeros(graph.tensors[i].shape, graph.tensors[i].dtype)
            call.kernel(call.params, [None if i == -1 else values[i] for i in op.inputs]
                        + [values[i] for i in op.outputs], None)
        for t in watched:
            np.testing.assert_array_equal(values[t].reshape(-1), want[t])


def svdf_model(batches: int, n_input: int, units: int, rank: int, memory: int, state: str, seed: int = 0,
               zero_point: int = 0, state_zero_point: int = 0) -> bytes:
    b = ModelBuilder(seed=seed)
    x = b.input((batches, n_input), scale=0.04, zero_point=zero_point)
    b.output(b.svdf(x, units, rank=rank, memory=memory, state=state, state_zero_point=state_zero_point))
    return b.build()


def lstm_model(shape: tuple[int, int, int], units: int, *, time_major: bool = False, int16: bool = False,
               cell_clip: float = 0.0, seed: int = 0, zero_point: int = 0, cell_scale_power: int = -11) -> bytes:
    b = ModelBuilder(seed=seed)
    if int16:
        x = b.input(shape, scale=1 / 4096, dtype="int16")
    else:
        x = b.input(shape, scale=0.03, zero_point=zero_point)
    b.output(b.lstm(x, units, time_major=time_major, cell_clip=cell_clip, out_zero_point=zero_point // 3,
                    cell_scale_power=cell_scale_power))
    return b.build()


SVDF_CASES = [
    # batches, input, units, rank, memory, state, input zp, state zp
    (1, 8, 4, 1, 5, "int16", 0, 0),
    (2, 16, 8, 2, 10, "int16", -7, 0),
    (3, 5, 3, 3, 2, "int16", 12, 0),
    (1, 40, 16, 1, 32, "int16", -128, 0),
    (1, 8, 4, 1, 5, "int8", 3, 0),
    (2, 12, 6, 2, 7, "int8", -20, -9),
]

LSTM_CASES = [
    # shape, units, time major, int16, cell clip, input zp, cell scale power
    ((1, 3, 5), 4, False, False, 0.0, 0, -11),
    ((2, 4, 8), 6, False, False, 0.0, -15, -11),
    ((4, 2, 6), 5, True, False, 0.0, 9, -12),
    ((1, 10, 16), 12, False, False, 1.5, 4, -11),
    ((2, 3, 7), 3, False, False, 0.0, 0, -14),
    ((1, 3, 5), 4, False, True, 0.0, 0, -11),
    ((3, 2, 6), 8, True, True, 2.0, 0, -11),
    ((2, 5, 12), 6, False, True, 0.0, 0, -13),
]


@pytest.mark.parametrize("case", SVDF_CASES, ids=lambda c: "x".join(map(str, c[:5])) + f"-{c[5]}")
def test_svdf_matches_tflm_run_after_run(case):
    batches, n_input, units, rank, memory, state, zp, st_zp = case
    model = svdf_model(batches, n_input, units, rank, memory, state, seed=len(SVDF_CASES) + batches,
                       zero_point=zp, state_zero_point=st_zp)
    assert _check_c_device(model, seed=1) > 0
    _check_numpy_oracle(model, seed=1)


@pytest.mark.parametrize("case", LSTM_CASES,
                         ids=lambda c: f"{'x'.join(map(str, c[0]))}-{c[1]}{'-tm' if c[2] else ''}"
                                       f"{'-s16' if c[3] else '-s8'}{'-clip' if c[4] else ''}")
def test_lstm_matches_tflm_run_after_run(case):
    shape, units, time_major, int16, clip, zp, power = case
    model = lstm_model(shape, units, time_major=time_major, int16=int16, cell_clip=clip, seed=units,
                       zero_point=zp, cell_scale_power=power)
    assert _check_c_device(model, seed=2) > 0
    _check_numpy_oracle(model, seed=2)


@pytest.mark.parametrize("make", [lambda: svdf_model(2, 8, 4, 2, 6, "int16"), lambda: lstm_model((2, 3, 5), 4),
                                  lambda: lstm_model((1, 4, 6), 5, int16=True)])
def test_reset_state_starts_the_sequence_again(make):
    model = make()
    graph = load_tflite(model)
    runs = _inputs(graph, seed=5, runs=3)
    with tvmdevice.compile(model, "c").executor() as ex:
        first = [ex.run(x)[0] for x in runs]
        assert not np.array_equal(ex.run(runs[0])[0], first[0])  # the state carried changes the output
        ex.reset_state()
        again = [ex.run(x)[0] for x in runs]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    # TFLM's reset gives the same sequence again
    interp = runtime.Interpreter.from_bytes(model, arena_size=1 << 20)
    for x in runs:
        interp.set_input(x[0], 0)
        interp.invoke()
    interp.reset()
    for x, want in zip(runs, first):
        interp.set_input(x[0], 0)
        interp.invoke()
        np.testing.assert_array_equal(interp.get_output(0), want)


def test_state_starts_at_tflms_reset_value_and_never_shares_memory():
    model = svdf_model(2, 12, 6, 2, 7, "int8", zero_point=-20, state_zero_point=-9)
    module = tvmdevice.compile(model, "c")
    (state,) = module.schedule.states
    assert module.graph.tensors[state].reset_value == -9
    plan = module.plan.pools["host"]
    key = ("tensor", state, "host")
    start, size = plan.offsets[key], module.graph.tensors[state].nbytes
    for other, offset in plan.offsets.items():
        if other != key:
            nbytes = (module.graph.tensors[other[1]].nbytes if other[0] == "tensor" else
                      module.prepared[other[1]].scratch_bytes)
            assert offset + nbytes <= start or start + size <= offset, other
    (use,) = [b for b in module.schedule.buffers if b.scratch_of is None and b.tensor == state]
    assert (use.first, use.last) == (-1, len(module.schedule.steps))
    with module.executor() as ex:
        np.testing.assert_array_equal(ex.tensor(state), np.full((2, 7 * 12), -9, np.int8))


def test_scratch_is_planned_as_tflm_requests_it():
    lstm = tvmdevice.compile(lstm_model((2, 3, 5), 4), "c")
    assert lstm.prepared[0].scratch_bytes == 4 * 2 * 4 * 2  # four int16 buffers of batches x state
    svdf = tvmdevice.compile(svdf_model(3, 5, 3, 3, 2, "int16"), "c")
    assert svdf.prepared[0].scratch_bytes == 4 * 3 * (9 + 3)  # int32 batches x (filters + units)


def test_the_sigmoid_table_is_tflms():
    assert SIGMOID_TABLE.size == 256 and SIGMOID_TABLE[0] == 32768 and SIGMOID_TABLE[-1] == 65535
    assert np.all(np.diff(SIGMOID_TABLE) >= 0)
    # sigmoid(i / 24) in Q0.16, to within the table's own rounding (TFLM's values are not all nearest)
    ideal = 65536.0 / (1.0 + np.exp(-np.arange(256) / 24.0))
    assert np.max(np.abs(SIGMOID_TABLE - ideal)) < 1.2
    assert SIGMOID_TABLE[1:5].tolist() == [33451, 34133, 34813, 35493]


def test_op_data_holds_tflms_effective_scales():
    graph = load_tflite(lstm_model((1, 3, 5), 4))
    d = ops.analyze(graph, graph.operators[0])
    assert isinstance(d, ops.LstmData) and d.activation_bits == 8
    # forget gate x cell state: 2**-15 exactly; Q3.12 -> Q0.15 products: the cell scale 2**-11
    assert (d.forget_multiplier, d.forget_shift) == (1 << 30, -14)
    assert (d.input_multiplier, d.input_shift) == (1 << 30, -18)
    assert (d.cell_tanh_multiplier, d.cell_tanh_shift) == (3 << 1, 0)
    params = calls.prepare(graph, graph.operators[0], d).params
    assert list(params.values["gate_input_multiplier"]) == list(d.gate_input_multiplier)


def _lstm_with(change):
    b = ModelBuilder(seed=0)
    x = b.input((1, 3, 5), scale=0.03)
    b.output(b.lstm(x, 4))
    change(b.spec)
    return b.build()


def test_state_that_is_not_a_variable_tensor_is_refused():
    def plain(spec):
        spec.tensors[spec.operators[0].inputs[18]].is_variable = False

    # In a file, a state no operator writes and that is not variable is read before it exists.
    with pytest.raises(ModelFormatError, match=r"UNIDIRECTIONAL_SEQUENCE_LSTM\) reads tensor \d+ before"):
        load_tflite(_lstm_with(plain))
    # In a graph built by hand, the operator layer refuses it as TFLM's prepare does.
    graph = load_tflite(_lstm_with(lambda spec: None))
    state = graph.tensors[graph.operators[0].inputs[18]]
    state.is_variable = False
    with pytest.raises(Refusal, match=r"output state tensor \d+ is not a variable tensor"):
        ops.analyze(graph, graph.operators[0])


def test_lstm_variants_tflm_does_not_run_are_refused():
    def cifg(spec):
        op = spec.operators[0]
        op.inputs = (op.inputs[0], -1, *op.inputs[2:])

    graph = load_tflite(_lstm_with(cifg))
    with pytest.raises(Refusal, match=r"input 1 \(input_to_input_weights\) is absent; TFLM's LSTM needs all four"):
        ops.analyze(graph, graph.operators[0])

    def relu(spec):
        spec.operators[0].options[1]["FusedActivationFunction"] = 1

    graph = load_tflite(_lstm_with(relu))
    with pytest.raises(Refusal, match=r"cell gate activation 'RELU'"):
        ops.analyze(graph, graph.operators[0])


def test_svdf_without_bias_is_refused_as_tflm_cannot_prepare_it():
    b = ModelBuilder(seed=0)
    x = b.input((1, 8), scale=0.04)
    b.output(b.svdf(x, 4, memory=3))
    op = b.spec.operators[0]
    op.inputs = (*op.inputs[:3], -1, op.inputs[4])
    graph = load_tflite(b.build())
    with pytest.raises(Refusal, match=r"SVDF.*the bias is absent"):
        ops.analyze(graph, graph.operators[0])


def test_state_on_a_separate_memory_device_is_refused(monkeypatch):
    from tvmdevice.aot import schedule

    graph = load_tflite(svdf_model(1, 8, 4, 1, 5, "int16"))
    module = tvmdevice.compile(graph, "c")
    monkeypatch.setattr(schedule, "memory_of", lambda entry: "woofles")  # as if the SVDF ran in its SRAM
    with pytest.raises(PlacementError, match=r"variable tensor #\d+ \(operator state\) lives in host memory"):
        schedule.build_schedule(graph, module.target, module.placement)


def test_run_graph_starts_state_from_its_reset_value():
    model = svdf_model(2, 12, 6, 2, 7, "int8", zero_point=-20, state_zero_point=-9)
    graph = load_tflite(model)
    x = _inputs(graph, 0, 1)[0]
    values = run_graph(graph, x)
    expected = _tflm(model, [x], _watched(graph))[0]
    for t, want in expected.items():
        np.testing.assert_array_equal(values[t].reshape(-1), want)


# -- hypothesis: sizes, layouts and quantization drawn at random, TFLM the oracle ----------------------

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


@hypothesis.settings(max_examples=40, deadline=None, derandomize=True)
@hypothesis.given(batches=st.integers(1, 3), time=st.integers(1, 4), n_input=st.integers(1, 12),
                  units=st.integers(1, 10), time_major=st.booleans(), int16=st.booleans(),
                  clip=st.sampled_from([0.0, 0.25, 3.0]), zp=st.integers(-128, 127), power=st.integers(-15, -9),
                  spread=st.sampled_from([0.5, 2.0, 8.0]), seed=st.integers(0, 2**16))
def test_lstm_hypothesis(batches, time, n_input, units, time_major, int16, clip, zp, power, spread, seed):
    shape = (time, batches, n_input) if time_major else (batches, time, n_input)
    b = ModelBuilder(seed=seed)
    x = b.input(shape, scale=1 / 4096, dtype="int16") if int16 else b.input(shape, scale=0.03, zero_point=zp)
    b.output(b.lstm(x, units, time_major=time_major, cell_clip=clip, out_zero_point=0 if int16 else zp // 2,
                    cell_scale_power=power, gate_spread=spread))
    assert _check_c_device(b.build(), seed=seed) > 0


@hypothesis.settings(max_examples=40, deadline=None, derandomize=True)
@hypothesis.given(batches=st.integers(1, 3), n_input=st.integers(1, 24), units=st.integers(1, 8),
                  rank=st.integers(1, 3), memory=st.integers(1, 12), state=st.sampled_from(["int16", "int8"]),
                  zp=st.integers(-128, 127), state_zp=st.integers(-20, 20), seed=st.integers(0, 2**16))
def test_svdf_hypothesis(batches, n_input, units, rank, memory, state, zp, state_zp, seed):
    model = svdf_model(batches, n_input, units, rank, memory, state, seed=seed, zero_point=zp,
                       state_zero_point=state_zp if state == "int8" else 0)
    assert _check_c_device(model, seed=seed) > 0
