"""--top-k is at least 1 and at most the model's classes; labels must be the model's classes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tvmdevice.aot.builder import ModelBuilder

ENV = {**os.environ, "TVMDEVICE_PLUGINS": "none-installed"}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tvmdevice", *args], capture_output=True, text=True, env=ENV)


def one_line(proc: subprocess.CompletedProcess, status: int, *words: str) -> str:
    assert proc.returncode == status, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    for w in words:
        assert w in line, line
    return line


@pytest.fixture(scope="module")
def two_classes(tmp_path_factory):
    """A 2-class classifier and a dataset of 6 samples with labels 0 and 1."""
    d = tmp_path_factory.mktemp("classes")
    b = ModelBuilder("two", seed=3)
    x = b.input((1, 8), scale=0.05)
    b.output(b.fully_connected(x, 2))
    (d / "two.tflite").write_bytes(b.build())
    rng = np.random.default_rng(1)
    np.savez(d / "data.npz", x=rng.integers(-128, 128, size=(6, 1, 8), dtype=np.int8), y=np.array([0, 1] * 3))
    np.save(d / "bad_labels.npy", np.array([0, 1, 2, 0, 5, 1]))
    np.save(d / "x.npy", rng.integers(-128, 128, size=(1, 8), dtype=np.int8))
    return d


@pytest.mark.parametrize("command", ["run", "eval"])
@pytest.mark.parametrize("k", ["0", "-3"])
def test_top_k_below_one_is_a_usage_error(two_classes, command, k):
    extra = ["--data", str(two_classes / "data.npz")] if command == "eval" else []
    proc = cli(command, str(two_classes / "two.tflite"), "-t", "c", *extra, "--top-k", k)
    one_line(proc, 2, "--top-k", "must be at least 1")


@pytest.mark.parametrize("command", ["run", "eval"])
def test_top_k_above_the_classes_is_refused(two_classes, command):
    extra = ["--data", str(two_classes / "data.npz"), "--report", str(two_classes / "r.csv")] \
        if command == "eval" else ["-i", str(two_classes / "x.npy")]
    proc = cli(command, str(two_classes / "two.tflite"), "-t", "c", *extra, "--top-k", "3")
    one_line(proc, 1, "--top-k 3 is more than the model's 2 classes")


def test_labels_outside_the_classes_are_refused(two_classes):
    proc = cli("eval", str(two_classes / "two.tflite"), "-t", "c", "--data", str(two_classes / "data.npz"),
               "--labels", str(two_classes / "bad_labels.npy"), "--report", str(two_classes / "r.csv"))
    one_line(proc, 1, "2 label(s) outside the model's classes 0..1", "sample 2, label 2")
    assert not (two_classes / "r.csv").exists()


def test_a_two_class_model_reports_no_top_k_accuracy(two_classes):
    """The default top-5 is capped to the 2 classes, and top-2 of 2 classes (always right) is not reported."""
    report = two_classes / "ok.csv"
    proc = cli("eval", str(two_classes / "two.tflite"), "-t", "c", "--data", str(two_classes / "data.npz"),
               "--report", str(report), "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert "top1_accuracy" in summary
    assert not [key for key in summary if key.startswith("top") and key != "top1_accuracy"], summary
    header = report.read_text().splitlines()[0].split(",")
    assert "top2" in header and not [h for h in header if h.startswith("correct_top")]
    proc = cli("eval", str(two_classes / "two.tflite"), "-t", "c", "--data", str(two_classes / "data.npz"),
               "--report", str(report), "--top-k", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "top1_accuracy" in json.loads(proc.stdout)
