"""Inputs and outputs: float quantization as TFLite's QUANTIZE, dequantization as DEQUANTIZE, top-k, and
sample order and names from a directory or a stacked file to the output rows."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.cli.inputs import TensorSpec, dequantize, quantize, top_k

ENV = {**os.environ, "TVMDEVICE_PLUGINS": "none-installed"}
needs_tflm = pytest.mark.skipif(importlib.util.find_spec("tflite_micro") is None,
                                reason="the oracle is tflite-micro (pip install tflite-micro)")


def _tflm(model: bytes, x: np.ndarray) -> np.ndarray:
    from tvmdevice.testing.oracle import tflm_run

    return np.asarray(tflm_run(model, [x]).output(0))


@needs_tflm
@pytest.mark.parametrize("scale, zp", [(0.05, 0), (0.584703, 83), (1 / 256, -128)])
def test_quantize_is_tflites_quantize(scale, zp):
    b = ModelBuilder()
    b.output(b.quantize(b.input((1, 400), dtype="float32"), scale, zp))
    model = b.build()
    # Values on the rounding midpoints (+0.5), and past both ends of the int8 range.
    x = ((np.arange(-200, 200) + 0.5) * scale).astype(np.float32).reshape(1, 400)
    spec = TensorSpec("x", (1, 400), np.dtype(np.int8), float(np.float32(scale)), zp)
    assert np.array_equal(quantize(x, spec), _tflm(model, x))


@needs_tflm
def test_dequantize_is_tflites_dequantize():
    b = ModelBuilder()
    b.output(b.dequantize(b.input((1, 256), scale=0.0123, zero_point=-7)))
    model = b.build()
    q = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    spec = TensorSpec("y", (1, 256), np.dtype(np.int8), float(np.float32(0.0123)), -7)
    assert np.array_equal(dequantize(q, spec), _tflm(model, q))


def test_top_k_best_first_ties_by_class():
    assert top_k(np.array([[3, 9, 9, -1]], np.int8), 3) == [(1, 9), (2, 9), (0, 3)]


def test_directory_rows_follow_sorted_file_names_and_are_saved_with_them(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    names = ["b.npy", "a.npy", "c10.npy", "c2.npy"]
    for i, n in enumerate(names):
        np.save(d / n, np.full((1, 16, 16, 1), 10 * i, np.int8))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "tvmdevice", "run", "-i", str(d), "-o", str(out), "--json",
                           "--dequantize", "--top-k", "2"], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    order = sorted(names)
    assert summary["names"] == order == (out / "samples.txt").read_text().split()
    rows = np.load(out / "output_0.npy")
    assert rows.shape == (4, 1, 10) and rows.dtype == np.float32
    import tvmdevice
    from tvmdevice.aot.builder import demo_model
    from tvmdevice.registry import Registry

    module = tvmdevice.compile(demo_model(), "c", registry=Registry(autoload=False))
    q = module.graph.tensors[module.graph.outputs[0]].quant
    with module.executor() as ex:
        for row, name in zip(rows, order):
            raw = ex.run([np.load(d / name)])[0]
            assert np.array_equal(row, (np.float32(q.scale[0]) * (raw.astype(np.int64) - q.zero_point[0]))
                                  .astype(np.float32))
            assert [c["class"] for c in summary["top_k"][order.index(name)]] == [c for c, _ in top_k(row, 2)]
