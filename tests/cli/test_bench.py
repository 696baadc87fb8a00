"""``tvmdevice bench``: latency statistics, per-step shares, and the same-process reference comparison."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tvmdevice.aot.builder import demo_model
from tvmdevice.cli.stats import LatencyStats

ENV = {**os.environ, "TVMDEVICE_PLUGINS": "none-installed"}


def test_latency_statistics():
    s = LatencyStats.of([1000 * v for v in range(1, 101)])  # 1..100 us
    assert (s.runs, s.mean_us, s.median_us, s.min_us, s.max_us) == (100, 50.5, 50.5, 1.0, 100.0)
    assert s.p90_us == pytest.approx(np.percentile(np.arange(1, 101), 90))
    assert s.p99_us == pytest.approx(99.01)
    assert s.std_us == pytest.approx(np.std(np.arange(1, 101), ddof=1))
    assert LatencyStats.of([5000]).std_us == 0.0
    with pytest.raises(ValueError):
        LatencyStats.of([])


def test_bench_json_with_compare(tmp_path):
    if importlib.util.find_spec("tflite_micro") is None:
        pytest.skip("--compare needs tflite-micro (pip install tflite-micro)")
    model = tmp_path / "demo.tflite"
    model.write_bytes(demo_model())
    proc = subprocess.run([sys.executable, "-m", "tvmdevice", "bench", str(model), "--runs", "7", "--warmup", "2",
                           "--compare", "--json"], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    lat = result["latency"]
    assert lat["runs"] == 7 and lat["min_us"] <= lat["median_us"] <= lat["p90_us"] <= lat["p99_us"] <= lat["max_us"]
    assert result["warmup"] == 2
    assert sum(s["share"] for s in result["steps"]) == pytest.approx(1.0)
    assert {s["label"].split()[1] for s in result["steps"]} >= {"CONV_2D", "FULLY_CONNECTED"}
    tflm = next(c for c in result["compare"] if c["reference"] == "tflite-micro")
    assert tflm["bit_exact"] is True and tflm["latency"]["runs"] == 7
    assert tflm["speedup"] == pytest.approx(tflm["latency"]["mean_us"] / lat["mean_us"])


@pytest.mark.parametrize("args, words", [
    (["--runs", "0"], "--runs must be at least 1"),
    (["--cpu", "cortex-m55"], "not an export"),
])
def test_bench_argument_errors(tmp_path, args, words):
    model = tmp_path / "demo.tflite"
    model.write_bytes(demo_model())
    proc = subprocess.run([sys.executable, "-m", "tvmdevice", "bench", str(model), *args], capture_output=True,
                          text=True, env=ENV)
    assert proc.returncode == 1 and words in proc.stderr and "Traceback" not in proc.stderr


def test_bench_of_a_stateful_export_compares_the_run_from_the_reset_state(tmp_path):
    """An SVDF export: the benched run starts from the reset state (the runner's warm-up leaves no trace),
    so its outputs are tflite-micro's first run's."""
    if importlib.util.find_spec("tflite_micro") is None:
        pytest.skip("--compare needs tflite-micro (pip install tflite-micro)")
    import tvmdevice
    from tvmdevice.aot.builder import ModelBuilder

    b = ModelBuilder("svdf", seed=4)
    x = b.input((2, 10), scale=0.04, zero_point=-3)
    b.output(b.svdf(x, 4, rank=2, memory=6, activation="RELU"))  # LiteRT's int8 SVDF needs RELU
    out = tvmdevice.compile(b.build(), "c", name="svdf").export(tmp_path / "export")
    proc = subprocess.run([sys.executable, "-m", "tvmdevice", "bench", str(out), "--cpu", "host", "--compare",
                           "--json"], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr
    tflm = next(c for c in json.loads(proc.stdout)["compare"] if c["reference"] == "tflite-micro")
    assert tflm["bit_exact"] is True
