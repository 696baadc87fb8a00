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
    assert tflm["speedup"] == pytest.approx(tflm["latency"]["median_us"] / lat["median_us"])  # medians


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


def _person_detect_like(path):
    """A convolution whose 1-D bias says quantized_dimension 3, as TFLM's person_detect model has: TFLM and
    tvmdevice run it, LiteRT refuses to load it."""
    from tvmdevice.aot.builder import ModelBuilder

    b = ModelBuilder("pd", seed=2)
    x = b.input((1, 8, 8, 2), scale=0.05)
    b.output(b.conv2d(x, 4, kernel=3))
    for op in b.spec.operators:
        b.spec.tensors[op.inputs[2]].quantized_dimension = 3
    path.write_bytes(b.build())
    return path


def _bench(*args, env=ENV):
    return subprocess.run([sys.executable, "-m", "tvmdevice", "bench", *map(str, args)], capture_output=True,
                          text=True, env=env)


def test_compare_keeps_our_timings_when_litert_rejects_the_model(tmp_path):
    if importlib.util.find_spec("tflite_micro") is None or importlib.util.find_spec("ai_edge_litert") is None:
        pytest.skip("needs tflite-micro and ai-edge-litert (pip install 'tvmdevice[bench]')")
    model = _person_detect_like(tmp_path / "pd.tflite")
    proc = _bench(model, "-t", "c", "--runs", "5", "--warmup", "1", "--compare")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    lines = proc.stdout.splitlines()
    litert = [line for line in lines if line.strip().startswith("LiteRT")]
    assert len(litert) == 1 and litert[0].strip().startswith("LiteRT: unavailable (") and "quantized_dimension" in \
        litert[0], proc.stdout
    assert any(line.strip().startswith("latency: median") for line in lines)
    assert any(line.strip().startswith("tflite-micro: median") and "bit-exact" in line for line in lines)
    result = json.loads(_bench(model, "-t", "c", "--runs", "5", "--warmup", "1", "--compare", "--json").stdout)
    assert result["latency"]["runs"] == 5
    ref = {c["reference"]: c for c in result["compare"]}
    assert ref["litert"]["available"] is False and "quantized_dimension" in ref["litert"]["reason"]
    assert ref["tflite-micro"]["bit_exact"] is True and ref["tflite-micro"]["latency"]["runs"] == 5


def test_bench_prints_no_litert_info_line_and_one_operator_index_per_row(tmp_path):
    if importlib.util.find_spec("tflite_micro") is None or importlib.util.find_spec("ai_edge_litert") is None:
        pytest.skip("needs tflite-micro and ai-edge-litert (pip install 'tvmdevice[bench]')")
    import re

    model = tmp_path / "demo.tflite"
    model.write_bytes(demo_model())
    proc = _bench(model, "-t", "c", "--runs", "3", "--warmup", "1", "--compare")
    assert proc.returncode == 0, proc.stderr
    assert "INFO" not in proc.stderr + proc.stdout, proc.stderr  # XNNPACK's "INFO: Created ... delegate"
    lines = proc.stdout.splitlines()
    rows = lines[lines.index("  per step (share of a profiled run):") + 1:]
    rows = [r for r in rows if r.startswith("    ")]
    assert rows and all(len(re.findall(r"#\d+", r)) == 1 for r in rows if "copy" not in r), rows


def test_bench_shows_progress_on_a_terminal_only(tmp_path):
    model = tmp_path / "demo.tflite"
    model.write_bytes(demo_model())
    quiet = _bench(model, "-t", "c", "--runs", "3", "--warmup", "1")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    import pty

    main, child = pty.openpty()  # stderr a real terminal
    proc = subprocess.Popen([sys.executable, "-m", "tvmdevice", "bench", str(model), "-t", "c", "--runs", "3",
                             "--warmup", "1"], stdout=subprocess.PIPE, stderr=child, env=ENV)
    os.close(child)
    drawn = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        drawn += chunk
    os.close(main)
    out = proc.communicate()[0].decode()
    assert proc.returncode == 0 and "latency: median" in out
    assert b"timed runs" in drawn and b"profiled runs" in drawn, drawn[:300]


def test_a_difference_says_how_large_it_is():
    from tvmdevice.cli.agreement import describe, difference

    ours = [np.array([[1, 2, 3, 4]], np.int8), np.array([5, 6], np.int8)]
    same = difference(ours, [o.copy() for o in ours], [0.5, 0.25])
    assert same == {"bit_exact": True} and describe(same) == "outputs bit-exact with ours"
    theirs = [np.array([1, 2, 6, 3], np.int8), np.array([5, 7], np.int8)]  # another shape, same size: reshaped
    d = difference(ours, theirs, [0.5, 0.25])
    assert d == {"bit_exact": False, "differing": 3, "elements": 6, "max_abs_diff": 3, "max_abs_diff_real": 1.5}
    assert describe(d) == ("outputs DIFFER from ours: 3 of 6 elements, by at most 3 quantization steps "
                           "(1.5 in real units)")
    assert "max_abs_diff_real" not in difference(ours, theirs, [0.5, None])
