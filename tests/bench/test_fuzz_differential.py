"""Smoke test of the differential fuzzer (bench/fuzz_differential.py): its
verdicts, and a tiny campaign that stops by itself and writes its summary."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tflite_micro.python.tflite_micro.runtime")

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "fuzz_differential.py"
_spec = importlib.util.spec_from_file_location("fuzz_differential", SCRIPT)
fuzz = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = fuzz  # its dataclasses look their module up
_spec.loader.exec_module(fuzz)

A = np.arange(4, dtype=np.int8)


def _ok(*outs):
    return {"ok": True, "outputs": list(outs)}


def _verdict(target_result, tflm):
    return fuzz.judge(("ok", {"targets": {"c": target_result}}), tflm, ["c"])


def test_identical_outputs_agree():
    findings, classes, tflm_class = _verdict(_ok(A), ("ok", _ok(A.copy())))
    assert (findings, classes, tflm_class) == ([], {"c": "ok"}, "ok")


def test_one_differing_value_is_a_mismatch():
    findings, _, _ = _verdict(_ok(A), ("ok", _ok(A + np.int8(1))))
    assert findings == ["mismatch:c"]


def test_tvmdevice_running_what_tflm_refuses_is_a_disagreement():
    findings, _, tflm_class = _verdict(_ok(A), ("ok", {"ok": False, "class": "load:RuntimeError"}))
    assert findings == ["tflm-refuses:c"] and tflm_class == "load:RuntimeError"


def test_a_tflm_crash_is_recorded_not_a_disagreement():
    findings, _, tflm_class = _verdict(_ok(A), ("crash", -11))
    assert findings == [] and tflm_class == "tflm-crash"


def test_a_raw_exception_and_a_worker_crash_are_findings():
    raw = {"ok": False, "class": "raw-exception:IndexError", "message": "..."}
    assert _verdict(raw, ("ok", _ok(A)))[0] == ["raw-exception:IndexError:c"]
    findings, classes, _ = fuzz.judge(("crash", -11), ("ok", _ok(A)), ["c"])
    assert findings == ["crash:tvmdevice(-11)"] and classes == {"c": "crash"}


def test_mutations_are_deterministic_per_seed_and_case():
    a, b = fuzz.CaseSource(3), fuzz.CaseSource(3)
    assert [a.case(i) for i in range(20)] == [b.case(i) for i in range(20)]


def test_a_small_campaign_stops_by_itself_and_writes_its_summary(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--cases", "6", "--workers", "1", "--seed", "5",
                           "--targets", "c", "--time-limit", "20", "--out", str(tmp_path), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["cases"] == 6 and summary["targets"] == ["c"]
    assert sum(summary["tvmdevice_classes"]["c"].values()) == 6
    assert sum(summary["tflm_classes"].values()) == 6
    # These six cases hold tvmdevice's own rules: no crash, hang or raw exception.
    assert not {k for k in summary["findings"] if k in ("crash", "hang", "raw-exception")}


def test_minimizer_keeps_what_the_finding_needs():
    data = bytes(range(1, 101))
    # The "finding" needs bytes 40 and 41 next to each other; the rest is noise.
    small = fuzz.minimize(data, lambda d: b"\x28\x29" in d, budget=5)
    assert small == b"\x28\x29"


def test_minimizer_zeroes_in_place_what_it_cannot_remove():
    data = bytes(range(1, 33))
    # Offsets must not move (length fixed) and byte 5 must stay: all else is zeroed.
    small = fuzz.minimize(data, lambda d: len(d) == 32 and d[5] == 6, budget=5)
    assert small == bytes(5) + b"\x06" + bytes(26)


def test_tflm_undefined_results_are_explained_not_disagreements():
    from tvmdevice.aot.builder import ModelBuilder

    b = ModelBuilder(seed=2)
    x = b.input((1, 5, 5, 3), scale=0.05)
    b.output(b.fully_connected(b.reshape(b.conv2d(x, filters=4), (1, -1)), 6))
    assert fuzz.tflm_undefined(b.build()) is None
    b.spec.external_buffers = True  # the weights after the flatbuffer: tflite-micro does not read them
    assert "Buffer.offset" in fuzz.tflm_undefined(b.build())

    q = ModelBuilder(seed=3)
    f = q.input((1, 8), dtype="float32")
    q.output(q.quantize(f, 1e-12))  # x / scale overflows int32: undefined in TFLM's conversion
    assert "overflows int32" in fuzz.tflm_undefined(q.build())
    q2 = ModelBuilder(seed=3)
    q2.output(q2.quantize(q2.input((1, 8), dtype="float32"), 0.05))
    assert fuzz.tflm_undefined(q2.build()) is None


def test_an_activation_input_scale_past_tflms_shift_range_is_undefined_there():
    """LOGISTIC/TANH: TFLM's CalculateInputRadius shifts 1LL by frexp(scale * 2^27)'s exponent (>= 63: undefined)."""
    fixture = Path(__file__).parents[1] / "fixtures" / "fuzz" / "logistic_input_scale_huge.tflite"
    assert "input_left_shift 154" in fuzz.tflm_undefined(fixture.read_bytes())
    from tvmdevice.aot.builder import ModelBuilder

    for scale, undefined in ((1e38, True), (2.0 ** 35, True), (2.0 ** 34, False), (0.05, False)):
        b = ModelBuilder(seed=4)
        b.output(b.tanh(b.input((1, 8), scale=scale)))
        assert (fuzz.tflm_undefined(b.build()) is not None) == undefined, scale
