"""The differential fuzzer's structure-aware mutators and its legs (bench/fuzz): each mutator writes a
valid flatbuffer that differs in the field it names, deterministically; the repeated-runs leg compares
every frame of a stateful model; the export leg catches exported C that differs from the Python
executor; ``--help`` lists every mutator and leg."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tflite

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from fuzz import legs, mutators, seeds, structure, verdicts  # noqa: E402

SEEDS = seeds.stateful_and_int16_models()


def _seed_for(mutator: mutators.Mutator, k: int) -> structure.Model:
    usable = [structure.read(data) for _, data in SEEDS]
    usable = [m for m in usable if mutator.applicable(m)]
    assert usable, f"no seed model for {mutator.name}"
    return usable[k % len(usable)]


@pytest.mark.parametrize("mutator", mutators.MUTATORS, ids=lambda m: m.name)
def test_each_mutator_writes_a_valid_file_changed_where_it_says(mutator):
    donor = structure.read(SEEDS[0][1])
    for k in range(6):
        original = _seed_for(mutator, k)
        model = original.copy()
        change = mutator.apply(model, random.Random(k), donor)
        data = structure.write(model)
        assert data[4:8] == b"TFL3"
        tflite.Model.GetRootAs(data, 0)  # the schema's reader walks it
        again = structure.read(data)  # and so does ours, field by field
        if not isinstance(mutator, mutators.OptionUnionType):  # (its table is read back as the other type's)
            assert structure.write(again) == data, f"{mutator.name}: the file does not hold what was written"
        before, after = structure.resolve(original, change.path), structure.resolve(again, change.path)
        assert before != after, f"{mutator.name} seed {k}: {change.path} unchanged ({change.note})"
        repeat = original.copy()
        assert mutator.apply(repeat, random.Random(k), donor) == change and repeat == model, "not deterministic"


def test_reading_and_writing_a_model_keeps_its_outputs():
    import tvmdevice

    for name, data in SEEDS:
        rewritten = structure.write(structure.read(data))
        assert structure.read(rewritten) == structure.read(data), name
        a, b = tvmdevice.compile(data, "c"), tvmdevice.compile(rewritten, "c")
        x = legs.input_arrays([(tuple(a.graph.tensors[i].shape), a.graph.tensors[i].dtype.str)
                               for i in a.graph.inputs], 1)
        with a.executor() as ea, b.executor() as eb:
            assert verdicts.same_outputs([np.array(o) for o in ea.run(x)], [np.array(o) for o in eb.run(x)]), name


def test_shape_permutations_keep_the_element_count_up_to_rank_8():
    model = structure.read(dict(SEEDS)["fc-add-s16"])
    ranks = set()
    for k in range(60):
        m = model.copy()
        change = mutators.ShapePermutation().apply(m, random.Random(k))
        old, new = structure.resolve(model, change.path), structure.resolve(m, change.path)
        assert int(np.prod(old)) == int(np.prod(new)) and 1 <= len(new) <= 8
        ranks.add(len(new))
    assert max(ranks) >= 6


@pytest.fixture(scope="module")
def lstm_run():
    pytest.importorskip("tflite_micro.python.tflite_micro.runtime")
    data = dict(SEEDS)["lstm-s8-intermediates"]
    ours = legs.tvm_case(data, ["c"], seed=3, frames=3)
    theirs = legs.tflm_case(data, ours["shapes"], seed=3, frames=3)
    return ours, theirs


def test_the_repeated_runs_leg_compares_every_frame(lstm_run):
    ours, theirs = lstm_run
    frames = ours["targets"]["c"]["frames"]
    assert ours["stateful"] and len(frames) == 3 and len(theirs["frames"]) == 3
    assert not np.array_equal(frames[0][0], frames[1][0]), "the state must change the frames (else blind)"
    assert verdicts.judge(("ok", ours), ("ok", theirs), ["c"])[0] == []
    planted = {**theirs, "frames": [f for f in theirs["frames"][:2]] + [[theirs["frames"][2][0] + np.int8(1)]]}
    assert verdicts.judge(("ok", ours), ("ok", planted), ["c"])[0] == ["stateful-mismatch:c"]


def test_a_model_without_state_runs_one_frame():
    from tvmdevice.aot.builder import single_op_model

    assert len(legs.tvm_case(single_op_model("ADD"), ["c"], seed=1, frames=3)["targets"]["c"]["frames"]) == 1


@pytest.fixture
def export_leg_ready(private_firmware_cache):
    """The host compiler the export leg builds with (skips naming the package without it); builds go to
    the session's private cache."""
    from tvmdevice.testing.firmware import require_tools

    require_tools("host")


def _export_case(monkeypatch, corrupt: str | None):
    """The export leg on an SVDF model (two frames), with the exported run's output corrupted or failing."""
    import tvmdevice.cli

    real = tvmdevice.cli.main

    def main(argv):
        rc = real(argv)
        if argv[0] == "run" and corrupt == "value":
            out = Path(argv[argv.index("-o") + 1]) / "output_0.npy"
            y = np.load(out)
            y.reshape(-1)[-1] ^= 1  # one bit of the last frame's last value
            np.save(out, y)
        return 1 if argv[0] == "run" and corrupt == "exit" else rc

    monkeypatch.setattr(tvmdevice.cli, "main", main)
    data = dict(SEEDS)["svdf-int16"]
    return legs.tvm_case(data, ["c"], seed=5, frames=2, export=True)


def test_the_export_leg_agrees_with_the_python_executor(monkeypatch, export_leg_ready):
    result = _export_case(monkeypatch, None)
    assert result["export"] == {"ok": True}
    assert verdicts.judge(("ok", result), ("ok", {"ok": True, **result["targets"]["c"]}), ["c"])[0] == []


def test_the_export_leg_reads_one_frame_s_outputs_whole(export_leg_ready):
    """One sample's outputs are saved without a leading axis: an output whose first axis is 2 is not two frames."""
    from tvmdevice.aot.builder import single_op_model

    result = legs.tvm_case(single_op_model("BROADCAST_TO"), ["c"], seed=1, frames=3, export=True)
    assert result["targets"]["c"]["outputs"][0].shape[0] == 2 and len(result["targets"]["c"]["frames"]) == 1
    assert result["export"] == {"ok": True}


@pytest.mark.parametrize("corrupt,finding", [("value", "export-mismatch:c"), ("exit", "export-error:c")])
def test_the_export_leg_catches_a_planted_difference(monkeypatch, export_leg_ready, corrupt, finding):
    result = _export_case(monkeypatch, corrupt)
    assert not result["export"]["ok"]
    assert verdicts.judge(("ok", result), ("ok", {"ok": True, **result["targets"]["c"]}), ["c"])[0] == [finding]


def test_a_kernel_the_tflm_wheel_lacks_is_no_disagreement():
    pytest.importorskip("tflite_micro.python.tflite_micro.runtime")
    from tvmdevice.aot.builder import single_op_model

    tflm = legs.tflm_case(single_op_model("RELU_N1_TO_1"), None, seed=1)
    if tflm["ok"]:
        pytest.skip("this tflite-micro wheel registers RELU_N1_TO_1")
    assert tflm["class"] == "load:no-kernel" and "RELU_N1_TO_1" in tflm["message"]
    ours = {"targets": {"c": {"ok": True, "outputs": [np.zeros(4, np.int8)]}}}
    assert verdicts.judge(("ok", ours), ("ok", tflm), ["c"])[0] == []
    refused = {**tflm, "class": "load:RuntimeError"}
    assert verdicts.judge(("ok", ours), ("ok", refused), ["c"])[0] == ["tflm-refuses:c"]


def test_help_lists_every_mutator_and_leg():
    out = subprocess.run([sys.executable, str(BENCH / "fuzz_differential.py"), "--help"], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    for name in [m.name for m in mutators.MUTATORS] + list(legs.LEGS):
        assert f"\n  {name} " in out, name
    for cls in ("stateful-mismatch", "export-mismatch", "export-error"):
        assert cls in out


def test_a_rank_8_operand_explains_a_divergence_and_rank_2_does_not():
    fixture = BENCH.parent / "tests" / "fixtures" / "fuzz" / "fully_connected_output_rank8.tflite"
    model = structure.read(fixture.read_bytes())
    assert "rank 8" in verdicts.tflm_undefined(structure.write(model))
    g = model.subgraphs[0]
    g.tensors[g.outputs[0]].shape = [1, 3]
    assert verdicts.tflm_undefined(structure.write(model)) is None


def test_sigint_stops_a_campaign_started_with_sigint_ignored_and_writes_its_summary(tmp_path):
    """As a shell starts a background job (`&`): SIGINT ignored at the start, yet it still stops the campaign."""
    import json
    import signal

    pytest.importorskip("tflite_micro.python.tflite_micro.runtime")
    proc = subprocess.Popen([sys.executable, str(BENCH / "fuzz_differential.py"), "--cases", "100000", "--workers",
                             "1", "--targets", "c", "--export-every", "0", "--out", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert "cases," in proc.stderr.readline()  # the first progress line: the campaign runs
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) in (0, 1)
    finally:
        proc.kill()
    err = proc.stderr.read()
    assert (tmp_path / "summary.json").is_file(), err[-2000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["complete"] is False and 0 <= summary["cases"] < 100000
