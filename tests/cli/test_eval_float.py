"""``eval --reference float:MODEL_FLOAT.tflite``: the int8 model's dequantized outputs against its float model
(LiteRT on the dequantized inputs): per output SNR, cosine similarity and top-1 agreement."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tvmdevice.aot.builder import ModelBuilder, float_twin

ENV = {**os.environ, "TVMDEVICE_PLUGINS": "none-installed"}
N = 8

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ai_edge_litert") is None,
                                reason="the float reference runs LiteRT: pip install ai-edge-litert")


def _classifier(seed: int, shape=(1, 8, 8, 1), outputs: int = 1) -> ModelBuilder:
    b = ModelBuilder("cls", seed=seed)
    x = b.input(shape, scale=0.05, zero_point=-3)
    y = b.reshape(b.conv2d(x, 4, kernel=3, activation="RELU"), (1, -1))
    b.output(b.fully_connected(y, 6))
    if outputs == 2:
        b.output(b.fully_connected(y, 3))
    return b


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tvmdevice", *map(str, args)], capture_output=True, text=True,
                          env=ENV)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("float")
    b = _classifier(3)
    (d / "cls.tflite").write_bytes(b.build())
    (d / "cls_float.tflite").write_bytes(float_twin(b.spec))
    (d / "other_float.tflite").write_bytes(float_twin(_classifier(11).spec))  # same shapes, other weights
    (d / "wide_float.tflite").write_bytes(float_twin(_classifier(3, shape=(1, 8, 9, 1)).spec))
    (d / "two_float.tflite").write_bytes(float_twin(_classifier(3, outputs=2).spec))
    rng = np.random.default_rng(2)
    x = rng.integers(-128, 128, size=(N, 1, 8, 8, 1), dtype=np.int8)
    np.savez(d / "data.npz", x=x, y=rng.integers(0, 6, size=N))
    return d, x


def _expected(d, x, float_name: str):
    """SNR, cosine and top-1 agreement computed here from tvmdevice's outputs and LiteRT's float outputs."""
    from ai_edge_litert.interpreter import Interpreter

    import tvmdevice
    from tvmdevice.registry import Registry

    module = tvmdevice.compile((d / "cls.tflite").read_bytes(), "c", registry=Registry(autoload=False))
    out_t = module.graph.tensors[module.graph.outputs[0]]
    in_t = module.graph.tensors[module.graph.inputs[0]]
    it = Interpreter(model_path=str(d / float_name))
    it.allocate_tensors()
    ours, theirs = [], []
    with module.executor() as ex:
        for s in x:
            q = ex.run([s])[0]
            ours.append(float(out_t.quant.scale[0]) * (q.astype(np.float64) - int(out_t.quant.zero_point[0])))
            real = float(in_t.quant.scale[0]) * (s.astype(np.float32) - int(in_t.quant.zero_point[0]))
            it.set_tensor(it.get_input_details()[0]["index"], real.astype(np.float32))
            it.invoke()
            theirs.append(it.get_tensor(it.get_output_details()[0]["index"]).astype(np.float64))
    a, r = np.concatenate([o.reshape(-1) for o in ours]), np.concatenate([t.reshape(-1) for t in theirs])
    snr = 10 * np.log10(np.sum(r * r) / np.sum((a - r) ** 2))
    cosine = np.dot(a, r) / np.linalg.norm(a) / np.linalg.norm(r)
    agree = np.mean([np.argmax(o) == np.argmax(t) for o, t in zip(ours, theirs)])
    return snr, cosine, agree


def test_the_float_models_figures(models, tmp_path):
    d, x = models
    report = tmp_path / "r.jsonl"
    proc = cli("eval", d / "cls.tflite", "-t", "c", "--data", d / "data.npz", "--reference",
               f"float:{d / 'cls_float.tflite'}", "--reference", "tflite-micro", "--report", report, "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    (got,) = summary["float"]["outputs"]
    snr, cosine, agree = _expected(d, x, "cls_float.tflite")
    assert got["output"] == 0 and got["snr_db"] == pytest.approx(snr, rel=1e-6)
    assert got["cosine"] == pytest.approx(cosine, rel=1e-9) and got["top1_agreement"] == pytest.approx(agree)
    assert snr > 25 and cosine > 0.99  # the quantization error alone: small
    assert summary["bit_exact"]["agree"] == N  # both references at once
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    assert len(rows) == N and all({"float_snr_db_0", "float_cosine_0", "float_top1_agree_0"} <= set(r) for r in rows)
    # another float model of the same shapes is far off: the figures can fail
    other = cli("eval", d / "cls.tflite", "-t", "c", "--data", d / "data.npz", "--reference",
                f"float:{d / 'other_float.tflite'}", "--report", report, "--json")
    assert other.returncode == 0, other.stderr
    (bad,) = json.loads(other.stdout)["float"]["outputs"]
    snr, cosine, agree = _expected(d, x, "other_float.tflite")
    assert bad["snr_db"] == pytest.approx(snr, rel=1e-6) and bad["snr_db"] < 10
    assert bad["top1_agreement"] == pytest.approx(agree)


def test_the_text_summary_and_two_workers(models, tmp_path):
    d, _ = models
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    proc = cli("eval", d / "cls.tflite", "-t", "c", "--data", d / "data.npz", "--reference",
               f"float:{d / 'cls_float.tflite'}", "--report", one)
    assert proc.returncode == 0, proc.stderr
    assert "against the float model" in proc.stdout
    assert "output 0: SNR" in proc.stdout and "cosine" in proc.stdout and "top-1 agreement" in proc.stdout
    proc = cli("eval", d / "cls.tflite", "-t", "c", "--data", d / "data.npz", "--reference",
               f"float:{d / 'cls_float.tflite'}", "--report", two, "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    assert list(csv.DictReader(one.open())) == list(csv.DictReader(two.open()))


@pytest.mark.parametrize("name, words", [
    ("wide_float.tflite", ["input 0 has shape (1, 8, 9, 1)", "(1, 8, 8, 1)", "must match"]),
    ("two_float.tflite", ["has 2 outputs, the int8 model 1"]),
    ("cls.tflite", ["input 0 is int8, not float32"]),
    ("nosuch.tflite", ["does not exist"]),
])
def test_a_float_model_that_does_not_match_is_refused(models, tmp_path, name, words):
    d, _ = models
    proc = cli("eval", d / "cls.tflite", "-t", "c", "--data", d / "data.npz", "--reference", f"float:{d / name}",
               "--report", tmp_path / "r.csv")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and all(w in lines[0] for w in words), proc.stderr
    assert not (tmp_path / "r.csv").exists()


def test_without_litert_the_error_says_what_to_install(models, monkeypatch):
    from tvmdevice.cli import float_reference
    from tvmdevice.errors import NotSupportedError

    d, _ = models
    real = importlib.util.find_spec
    monkeypatch.setattr(float_reference.importlib.util, "find_spec",
                        lambda name, *a: None if name == "ai_edge_litert" else real(name, *a))
    with pytest.raises(NotSupportedError, match="pip install ai-edge-litert"):
        float_reference.read_float_model(str(d / "cls_float.tflite"), [], [])


def test_reference_values_are_checked_by_argparse(models):
    d, _ = models
    proc = cli("eval", d / "cls.tflite", "--data", d / "data.npz", "--reference", "float:")
    assert proc.returncode == 2 and "choose tflite-micro or float:MODEL_FLOAT.tflite" in proc.stderr
