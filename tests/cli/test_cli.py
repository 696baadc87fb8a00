"""The command line, as a user runs it (subprocesses)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tvmdevice

ENV = {**os.environ, "TVMDEVICE_PLUGINS": "none-installed"}  # only the built-in host device


def tvmdevice_cli(*args: str, check: bool = True, env=ENV) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "tvmdevice", *args], capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def test_version_and_help():
    lines = tvmdevice_cli("--version").stdout.strip().splitlines()
    assert lines[0] == f"tvmdevice {tvmdevice.__version__}"
    # ... then every installed plugin distribution with its version, whether the allow-list loads it or not.
    from importlib import metadata

    dists = {ep.dist.metadata["Name"]: ep.dist.version for ep in metadata.entry_points(group="tvmdevice")}
    assert len(lines) == 1 + len(dists)
    for name, version in dists.items():
        assert any(line.startswith(f"{name} {version} (plugin ") for line in lines[1:])
    out = tvmdevice_cli("--help").stdout
    for cmd in ("plugins", "run", "header"):
        assert cmd in out
    assert tvmdevice_cli("run", "--help").stdout.count("--target") >= 1


def test_run_demo_with_profile_and_trace(tmp_path):
    trace = tmp_path / "trace.json"
    out = tvmdevice_cli("run", "--profile", "--trace", str(trace)).stdout
    assert "model demo" in out and "placement on target 'c'" in out and "host arena:" in out
    assert "CONV_2D" in out and "total" in out and "output 0: shape (1, 10) int8" in out
    events = json.loads(trace.read_text())["traceEvents"]
    names = {e["name"] for e in events}
    assert {"init", "open", "activate", "deactivate", "close", "destroy"} <= names
    assert any(e["cat"] == "kernel" for e in events)


def test_run_many_inputs_writes_stacked_outputs(tmp_path):
    x = np.random.default_rng(1).integers(-128, 128, size=(5, 1, 16, 16, 1), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    proc = tvmdevice_cli("run", "--input", str(tmp_path / "x.npy"), "--output", str(tmp_path / "out"), "--json")
    summary = json.loads(proc.stdout)
    assert summary["samples"] == 5
    out = np.load(tmp_path / "out" / "output_0.npy")
    assert out.shape == (5, 1, 10) and out.dtype == np.int8
    # The same inputs through the Python API give the same outputs.
    from tvmdevice.aot.builder import demo_model
    from tvmdevice.registry import Registry

    module = tvmdevice.compile(demo_model(), "c", registry=Registry(autoload=False))
    with module.executor() as ex:
        for i in range(5):
            assert np.array_equal(ex.run([x[i]])[0], out[i])


def test_run_directory_of_inputs(tmp_path):
    d = tmp_path / "inputs"
    d.mkdir()
    for i in range(3):
        np.save(d / f"{i}.npy", np.full((1, 16, 16, 1), i, np.int8))
    summary = json.loads(tvmdevice_cli("run", "-i", str(d), "--json").stdout)
    assert summary["samples"] == 3


#: woofles hidden by the allow-list when it is installed; otherwise how to install it.
_WOOFLES_ABSENT = ("excluded by the allow-list TVMDEVICE_PLUGINS=none-installed"
                   if importlib.util.find_spec("tvmdevice_woofles") else "pip install ./plugins/woofles")


@pytest.mark.parametrize("args, words", [
    (["run", "--target", "woofles, c"], _WOOFLES_ABSENT),
    (["run", "--target", "c -mcpu"], "option -mcpu expects str"),
    (["run", "no-such-model.tflite"], "no-such-model.tflite"),
    (["header"], "name a device"),
])
def test_errors_are_one_clear_line_and_non_zero(args, words):
    proc = tvmdevice_cli(*args, check=False)
    assert proc.returncode != 0
    assert words in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr


def test_malformed_model_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x00" * 64)
    proc = tvmdevice_cli("run", str(bad), check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "bad.tflite" in proc.stderr or "TFL3" in proc.stderr


def test_header_command_prints_compilable_headers():
    text = tvmdevice_cli("header", "c").stdout
    assert "typedef struct tvm_device_c_t" in text and "int32_t TVMDeviceCOpen(tvm_device_c_t* device);" in text
    devices = tvmdevice_cli("header", "--target", "c", "--model", "kws").stdout
    assert "struct tvmgen_kws_devices" in devices
