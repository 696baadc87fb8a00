"""``tvmdevice eval``: accuracy, bit-exact agreement, a per-sample report; the same results on every engine."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tvmdevice.aot.builder import demo_model
from tvmdevice.cli.evaluate import EvalJob, chunks, evaluate

ENV = {**os.environ, "TVMDEVICE_PLUGINS": "none-installed"}
N = 12


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    d = tmp_path_factory.mktemp("eval")
    (d / "demo.tflite").write_bytes(demo_model())
    rng = np.random.default_rng(7)
    x = rng.integers(-128, 128, size=(N, 1, 16, 16, 1), dtype=np.int8)
    np.savez(d / "data.npz", x=x, y=rng.integers(0, 10, size=N))
    return d, x


@pytest.fixture(scope="module")
def single(dataset):
    d, x = dataset
    before = os.environ.get("TVMDEVICE_PLUGINS")
    job = EvalJob(demo_model(), "demo", target="c", top=3, env={"TVMDEVICE_PLUGINS": "none-installed"})
    results = evaluate(job, [[s] for s in x])
    assert os.environ.get("TVMDEVICE_PLUGINS") == before, "the job's environment is for workers, not this process"
    return job, [[s] for s in x], results


def test_chunks_cover_every_sample_once():
    for n, parts in [(1, 1), (12, 2), (13, 3), (100, 7)]:
        ranges = chunks(n, parts)
        assert [i for a, b in ranges for i in range(a, b)] == list(range(n))


def test_single_process_results_are_the_executors(single):
    import tvmdevice
    from tvmdevice.registry import Registry

    job, samples, results = single
    assert [r.index for r in results] == list(range(N))
    module = tvmdevice.compile(demo_model(), "c", registry=Registry(autoload=False))
    with module.executor() as ex:
        for r, s in zip(results, samples):
            out = ex.run(s)[0].reshape(-1)
            assert r.top[0] == int(np.argmax(out)) and r.scores[0] == out.max()


def test_two_workers_give_the_single_process_results(single):
    job, samples, results = single
    assert evaluate(job, samples, workers=2) == results


def test_ray_gives_the_single_process_results(single):
    if importlib.util.find_spec("ray") is None:
        pytest.skip("--engine ray needs Ray: pip install 'tvmdevice[ray]' (the tox environment 'all' installs it)")
    job, samples, results = single
    assert evaluate(job, samples, workers=2, engine="ray") == results


def test_eval_cli_accuracy_reference_and_report(dataset, tmp_path):
    if importlib.util.find_spec("tflite_micro") is None:
        pytest.skip("--reference tflite-micro needs tflite-micro (pip install tflite-micro)")
    d, x = dataset
    report = tmp_path / "report.csv"
    proc = subprocess.run([sys.executable, "-m", "tvmdevice", "eval", str(d / "demo.tflite"), "-t", "c",
                           "--data", str(d / "data.npz"), "--reference", "tflite-micro", "--top-k", "3",
                           "--report", str(report), "--json"], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    rows = list(csv.DictReader(report.open()))
    assert [r["name"] for r in rows] == [f"data.npz[{i}]" for i in range(N)]
    labels = np.load(d / "data.npz")["y"]
    assert [int(r["label"]) for r in rows] == labels.tolist()
    assert summary["samples"] == N and summary["bit_exact"] == {"agree": N, "checked": N, "differ": []}
    assert summary["top1_accuracy"] == pytest.approx(sum(r["correct"] == "True" for r in rows) / N)
    assert summary["top3_accuracy"] >= summary["top1_accuracy"]


def _svdf() -> bytes:
    from tvmdevice.aot.builder import ModelBuilder

    b = ModelBuilder("svdf", seed=4)
    x = b.input((2, 10), scale=0.04, zero_point=-3)
    b.output(b.svdf(x, 4, rank=2, memory=6))
    return b.build()


def _digests(outputs: list[np.ndarray]) -> str:
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(outputs[0]).tobytes()).hexdigest()


def test_a_stateful_models_samples_are_one_sequence_in_order(tmp_path):
    """An SVDF model: sample i's outputs are TFLM's frame i + 1, in process, split over workers or
    from an export (one process for the whole sequence), and the CLI summary says so."""
    runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")
    import tvmdevice
    from tvmdevice.cli.eval_cmd import STATE_SEQUENCE

    model = _svdf()
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, size=(5, 2, 10), dtype=np.int8)
    interp = runtime.Interpreter.from_bytes(model, arena_size=1 << 20)
    want = []
    for s in x:
        interp.set_input(s, 0)
        interp.invoke()
        want.append(_digests([interp.get_output(0)]))
    assert len(set(want)) == len(want)
    job = EvalJob(model, "svdf", target="c", reference="tflite-micro", stateful=True,
                  env={"TVMDEVICE_PLUGINS": "none-installed"})
    samples = [[s] for s in x]
    for workers in (1, 2):  # two workers: still one chunk, in order
        results = evaluate(job, samples, workers=workers)
        assert [r.outputs_sha256 for r in results] == want, f"{workers} worker(s)"
        assert all(r.bit_exact for r in results)
    module = tvmdevice.compile(model, "c", name="svdf")
    out = module.export(tmp_path / "export")
    exported = EvalJob(model, "svdf", export_dir=str(out), cpu="host", reference="tflite-micro", stateful=True)
    results = evaluate(exported, samples)
    assert [r.outputs_sha256 for r in results] == want
    assert all(r.bit_exact for r in results)
    np.savez(tmp_path / "data.npz", x=x)
    proc = subprocess.run([sys.executable, "-m", "tvmdevice", "eval", str(out), "--data", str(tmp_path / "data.npz"),
                           "--reference", "tflite-micro", "--report", str(tmp_path / "r.csv"), "--json"],
                          capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["state"] == STATE_SEQUENCE
    assert summary["bit_exact"] == {"agree": 5, "checked": 5, "differ": []}


def test_an_lstm_gives_the_same_report_for_every_worker_count(tmp_path):
    """An LSTM (state in variable tensors): the CLI's report and summary at 1 and 2 workers are the same, and
    every sample is bit-exact with tflite-micro, whose interpreter runs the same sequence from the reset state."""
    pytest.importorskip("tflite_micro.python.tflite_micro.runtime")
    from tvmdevice.aot.builder import ModelBuilder

    b = ModelBuilder("lstm", seed=4)
    x = b.input((1, 3, 6), scale=0.05, zero_point=2)
    b.output(b.lstm(x, 5))
    (tmp_path / "lstm.tflite").write_bytes(b.build())
    rng = np.random.default_rng(1)
    np.savez(tmp_path / "data.npz", x=rng.integers(-128, 128, size=(10, 1, 3, 6), dtype=np.int8),
             y=rng.integers(0, 15, size=10))
    reports, summaries = [], []
    for workers in (1, 2):
        report = tmp_path / f"r{workers}.csv"
        proc = subprocess.run([sys.executable, "-m", "tvmdevice", "eval", str(tmp_path / "lstm.tflite"), "-t", "c",
                               "--data", str(tmp_path / "data.npz"), "--reference", "tflite-micro", "--workers",
                               str(workers), "--report", str(report), "--json"],
                              capture_output=True, text=True, env=ENV)
        assert proc.returncode == 0, proc.stderr
        summary = json.loads(proc.stdout)
        assert summary["bit_exact"] == {"agree": 10, "checked": 10, "differ": []}, f"{workers} worker(s)"
        summaries.append({k: v for k, v in summary.items() if k not in ("seconds", "workers", "report")})
        reports.append(report.read_text())
    assert reports[0] == reports[1] and summaries[0] == summaries[1]
    assert len({row.split(",")[-1] for row in reports[0].splitlines()[1:]}) == 10  # the state moves every sample
